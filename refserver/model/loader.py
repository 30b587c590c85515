"""Build the model: from a local Hugging Face directory (`load_model`) or tiny and random (`tiny_model`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.model import ModelConfig
from refserver.model.config import config_from_hf, tiny_config

if TYPE_CHECKING:
    import torch

    from refserver.model.llama import LlamaForCausalLM

# Buffers some checkpoints carry that this implementation recomputes.
_IGNORED_SUFFIXES = ("rotary_emb.inv_freq",)


def resolve_device(device: str | None) -> torch.device:
    import torch

    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    """"auto" is float32 on CPU (exact tests, fast enough) and bfloat16 on accelerators."""
    import torch

    if dtype in (None, "auto"):
        return torch.float32 if device.type == "cpu" else torch.bfloat16
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if dtype not in table:
        raise ValueError(f"unsupported dtype {dtype!r}; choose one of auto, {', '.join(table)}")
    return table[dtype]


def read_model_config(model_dir: str | Path) -> ModelConfig:
    path = Path(model_dir) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: a model directory needs a Hugging Face config.json")
    hf = json.loads(path.read_text())
    if not isinstance(hf, dict):
        raise ValueError(f"{path}: config.json must hold a JSON object")
    return config_from_hf(hf, name=str(hf.get("_name_or_path") or path.resolve().parent.name))


def _weight_files(model_dir: Path) -> list[Path]:
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        weight_map: dict[str, str] = json.loads(index.read_text())["weight_map"]
        return [model_dir / name for name in sorted(set(weight_map.values()))]
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors weights in {model_dir} (.bin checkpoints are not supported)")
    return files


def load_model(model_dir: str | Path, *, dtype: str | None = None, device: str | None = None) -> LlamaForCausalLM:
    """Load a Llama checkpoint (config.json + safetensors, single or sharded) onto `device` in `dtype`."""
    import torch
    from safetensors import safe_open

    from refserver.model.llama import LlamaForCausalLM

    model_dir = Path(model_dir)
    config = read_model_config(model_dir)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    # Allocate real storage without the cost of a random init; every tensor is overwritten below.
    model = model.to(dtype=dt).to_empty(device=dev)
    if config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    params = dict(model.named_parameters())
    loaded: set[str] = set()
    for path in _weight_files(model_dir):
        with safe_open(str(path), framework="pt", device="cpu") as f:
            for name in f.keys():  # noqa: SIM118 - safe_open handles are not iterable
                if name.endswith(_IGNORED_SUFFIXES) or (config.tie_word_embeddings and name == "lm_head.weight"):
                    continue
                if name not in params:
                    raise ValueError(f"unexpected weight {name!r} in {path.name}: not a Llama parameter")
                tensor = f.get_tensor(name)
                if tuple(tensor.shape) != tuple(params[name].shape):
                    raise ValueError(f"{name}: checkpoint shape {tuple(tensor.shape)} != model {tuple(params[name].shape)}")
                with torch.no_grad():
                    params[name].copy_(tensor.to(dt))
                loaded.add(name)
    missing = sorted(set(params) - loaded - ({"lm_head.weight"} if config.tie_word_embeddings else set()))
    if missing:
        raise ValueError(f"checkpoint in {model_dir} lacks {len(missing)} weights, e.g. {missing[:3]}")
    return model.eval()


def tiny_model(
    seed: int = 0, *, config: ModelConfig | None = None, dtype: str | None = None, device: str | None = None
) -> LlamaForCausalLM:
    """A deterministic random-weight model (same seed → same weights on any machine), no download."""
    import torch

    from refserver.model.llama import LlamaForCausalLM

    config = config or tiny_config()
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    gen = torch.Generator().manual_seed(seed)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    model = model.to_empty(device="cpu")
    if config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                # Norm gains near 1, but not exactly, so a wrong norm placement changes the output.
                param.copy_(1.0 + 0.1 * torch.randn(param.shape, generator=gen))
            elif name.endswith(".bias"):
                param.zero_()
            else:
                # Unit-scale activations so logits are far from ties and greedy comparisons are meaningful.
                fan_in = param.shape[-1] if not name.endswith("embed_tokens.weight") else 1
                param.copy_(torch.randn(param.shape, generator=gen) / fan_in**0.5)
    return model.to(device=dev, dtype=dt).eval()
