"""The workload a run spec describes: synthetic prompts of a length distribution, or a dataset file."""

from __future__ import annotations

from loadgen.spec.sections import WorkloadSpec
from loadgen.workload.counters import make_counter
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, Workload, load_jsonl, load_sharegpt


def dataset_format(spec: WorkloadSpec) -> str:
    """`auto` resolved by the file's extension."""
    if spec.dataset_format != "auto" or spec.dataset is None:
        return spec.dataset_format
    return "jsonl" if spec.dataset.endswith((".jsonl", ".ndjson")) else "sharegpt"


def build_workload(spec: WorkloadSpec, *, seed: int, embedded: bool) -> Workload:
    """Reads the dataset or the tokenizer when there is one: ValueError (a usage error) when it cannot."""
    counter_name, counter = make_counter(spec.token_counter(embedded))
    tags = dict(spec.tags)
    if spec.dataset is not None:
        fmt = dataset_format(spec)
        loader = load_jsonl if fmt == "jsonl" else load_sharegpt
        return DatasetWorkload(fmt, spec.dataset, loader(spec.dataset, counter, tags), seed, spec.output_tokens)
    return SyntheticWorkload(spec.prompt_tokens, spec.output_tokens, seed, counter_name, counter,
                             prefix_groups=spec.prefix_groups, prefix_tokens=spec.prefix_tokens,
                             prefix_weights=list(spec.prefix_weights) if spec.prefix_weights is not None else None,
                             tags=tags)
