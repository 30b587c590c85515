"""RunSpec's JSON is checked as it is built: every value of the spec is one of JSON's types (a field of any
other type is an error where it is encoded, not a crash or a silently different run.json later)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.spec import RunSpec
from loadgen.spec.run_spec import _encode
from metrics.results import json_object


def test_the_default_spec_is_plain_json_and_round_trips() -> None:
    spec = RunSpec()
    data = spec.to_json()
    assert json_object(data) == data == json.loads(json.dumps(data))
    assert RunSpec.from_json(data) == spec


def test_a_value_json_has_no_type_for_is_refused_where_it_is_encoded() -> None:
    with pytest.raises(TypeError, match="Path"):
        _encode(Path("runs"))
    assert _encode((1, "a", None, 2.5, True)) == [1, "a", None, 2.5, True]
