"""server-model.json read back once, typed (loadgen.predict.fit_json, StepModel.from_json): the fit as
calibrate writes it comes back as it was, an entry of another shape is left out of it (the fit only
informs), and a fit or limits of the wrong type is one ValueError naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.predict.fit_json import parse_fit, parse_server_check
from loadgen.predict.step_model import SchedulerLimits, StepModel, load_model

CHECK = {"decode_per_token_s": {"server": 0.011, "model": 0.0105, "chunks": None},
         "prefill_mean_s": {"server": 0.04, "model": 0.041, "server_requests": 24.0, "requests": 24, "fitted": True,
                            "note": "the server counted 2 more requests"},
         "queue_mean_s": None, "batch": {"scrapes": 7, "running": 2.5, "waiting": None, "steps_imply": 2.4}}
FIT = {"sources": ["a", "b"], "points": 360, "aggregate_rows": 2, "residual_rms_s": 0.0012, "form": "additive",
       "forms_residual_rms_s": {"additive": 0.0012, "overlapped": 0.0015}, "pinned": ["memory_s"],
       "runs": {"a": {"steps": 180.0, "mean_step_s": 0.03, "rms_residual_s": 0.001, "mean_residual_s": 0,
                      "step_source": "chunks", "server": CHECK},
                "b": {"steps": 180.0, "mean_step_s": 0.05, "rms_residual_s": 0.002, "mean_residual_s": 0.0001,
                      "step_source": "engine"}},
       "limits_source": {"max_num_seqs": "flag", "block_size": "server"},
       "prefill_steps": {"all": 31, "left_out": 3},
       "server_rows": {"parameters": ["prefill_s"], "runs": ["a"], "weight": "sqrt(distinct prefill steps)",
                       "exact": False}}


def _model(tmp_path: Path, **changes: Any) -> Path:
    doc: dict[str, Any] = {**StepModel(fixed_s=0.01, prefill_s=1e-5, limits=SchedulerLimits()).to_json(), "fit": FIT}
    doc.update(changes)
    path = tmp_path / "server-model.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_fit_calibrate_writes_comes_back_as_it_was(tmp_path: Path) -> None:
    model = load_model(_model(tmp_path))
    assert model.fit == FIT and list(model.fit) == list(FIT)
    assert json.loads(json.dumps(model.to_json()))["fit"] == FIT
    assert parse_fit(None, "m") == {}


def test_an_entry_of_another_shape_is_left_out_of_the_fit() -> None:
    odd = {**FIT, "points": "many", "form": 3, "pinned": ["memory_s", 1], "later_key": 1,
           "runs": {"a": {**FIT["runs"]["a"], "server": {**CHECK, "batch": {"scrapes": 7}}}, "b": {"steps": None}},
           "prefill_steps": {"all": 31}}
    fit = parse_fit(odd, "m")
    assert set(fit) == set(FIT) - {"points", "form", "pinned", "prefill_steps"}
    assert fit["runs"] == {"a": {k: v for k, v in FIT["runs"]["a"].items() if k != "server"}}
    assert parse_server_check({**CHECK, "prefill_mean_s": {**CHECK["prefill_mean_s"], "fitted": "yes"}}) is None
    assert parse_server_check(CHECK) == CHECK


@pytest.mark.parametrize(("changes", "says"), [
    ({"fit": "calibrated"}, "not a server model (its fit is not an object)"),
    ({"limits": {"block_size": "16"}}, "limits.block_size is not an integer ('16')"),
    ({"limits": {"block_size": 16.0}}, "limits.block_size is not an integer (16.0)"),
    ({"limits": {"enable_prefix_caching": "yes"}}, "limits.enable_prefix_caching is not true or false ('yes')"),
    ({"limits": {"max_seqs": 8}}, "limits has no 'max_seqs'"),
    ({"limits": None}, "limits is not an object (None)"),
    ({"std_err": [1.0]}, "std_err is not an object ([1.0])"),
    ({"prefill_s": [1.0]}, "float() argument must be a string or a real number, not 'list'"),
])
def test_a_fit_or_limits_of_the_wrong_type_is_one_error_naming_it(tmp_path: Path, changes: dict[str, Any],
                                                                   says: str) -> None:
    path = _model(tmp_path, **changes)
    with pytest.raises(ValueError) as err:
        load_model(path)
    assert str(err.value).startswith(f"{path}: ") and says in str(err.value) and "\n" not in str(err.value)
