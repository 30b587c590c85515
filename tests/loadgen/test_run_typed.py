"""The run's in-memory results, typed where they are read: a `/v1/models` entry (ServedModel), the
`--max-failed` check on the summary's request counts, a schema-1 run.json's settings."""

from __future__ import annotations

import pytest

from loadgen.run.failing import too_many_failed
from loadgen.run.model_len import max_model_len
from loadgen.run.models import ServedModel
from loadgen.run.outputs import summary_config
from metrics.results import Requests
from metrics.slo import SLO


def test_a_vllm_models_entry_gives_its_id_and_context() -> None:
    entry = {"id": "m", "object": "model", "owned_by": "vllm", "root": "m", "max_model_len": 2048}
    assert ServedModel.from_entry(entry) == ServedModel("m", 2048, None)


@pytest.mark.parametrize("bogus", [True, "2048", 0, -5, 2048.0, None])
def test_a_context_length_that_is_no_positive_integer_is_not_said(bogus: object) -> None:
    model = ServedModel.from_entry({"id": "m", "max_model_len": bogus})
    assert model.max_model_len is None
    assert max_model_len([model], "m") is None


def test_the_context_is_the_listed_models_own() -> None:
    models = [ServedModel("a", 1024), ServedModel("b", 4096)]
    assert (max_model_len(models, "b"), max_model_len(models, "c"), max_model_len(None, "a")) == (4096, None, None)


def test_a_sim_engine_entry_announces_its_roofline_spec() -> None:
    entry = {"id": "m", "engine": "sim", "sim": {"sim_model": "Llama-3.1-8B", "sim_gpu": "H100-SXM", "tp": 2}}
    spec = ServedModel.from_entry(entry).sim_roofline
    assert spec is not None and (spec["model"], spec["gpu"], spec["tp"], spec["dtype"]) == (
        "Llama-3.1-8B", "H100-SXM", 2, "bf16")
    assert ServedModel.from_entry({"id": "m", "sim": {"sim_model": "x"}}).sim_roofline is None  # not a sim engine


def _requests(**counts: object) -> Requests:
    return Requests.from_json(counts)


def test_max_failed_counts_the_failures_that_are_the_servers() -> None:
    # 30 failed of which 10 were a lost worker's: 20 of 90 ended requests failed, 22% > 10%
    line = too_many_failed(_requests(failed=30, succeeded=70, errors={"worker_lost": 10, "http_500": 20}), "10%")
    assert line == ("goodput: error: 20 of 90 requests failed (22% > --max-failed 10%); "
                    "--max-failed 100% accepts any number")
    assert too_many_failed(_requests(failed=30, succeeded=70, errors={"worker_lost": 25}), "10%") is None
    assert too_many_failed(_requests(failed=5, succeeded=0), "1") is None  # nothing succeeded: said elsewhere


def test_schema_1_settings_are_read_typed() -> None:
    config = summary_config({"warmup_s": 2, "prompt_bucket_edges": [0, 10, 100], "absent_cache_is_zero": True},
                            SLO())
    assert (config.warmup_s, tuple(config.prompt_bucket_edges), config.absent_cache_is_zero) == (2, (0, 10, 100), True)
    assert summary_config({}, SLO()).stall_threshold_s == 1.0


@pytest.mark.parametrize(("settings", "message"), [
    ({"warmup_s": "5"}, "run.json: settings.warmup_s must be a number, got '5'"),
    ({"absent_cache_is_zero": "yes"}, "run.json: settings.absent_cache_is_zero must be true or false, got 'yes'"),
    ({"output_bucket_edges": "0,10"}, "run.json: settings.output_bucket_edges must be a list of integers, got '0,10'"),
])
def test_a_schema_1_setting_of_the_wrong_type_is_one_clear_error(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        summary_config(settings, SLO())
    assert str(info.value) == message
