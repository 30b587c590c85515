"""The records' and the dashboards' JSON stay typed: untyped JSON objects (`dict[str, Any]`,
`Mapping[str, Any]`, `dict[str, object]`, `Mapping[str, object]`) are left in these files only where JSON
crosses the process's edge, each one listed with its reason. And a checked records.jsonl line's type
(RecordLine) names exactly the fields the check checks, which are the record's."""

from __future__ import annotations

import typing

from metrics.records.record import RequestRecord
from metrics.records.record_check import (
    BOOL_FIELDS,
    INT64_FIELDS,
    LIST_FIELDS,
    OBJECT_FIELDS,
    STRING_FIELDS,
    RecordLine,
)
from tests.untyped_json import aliases, counts

SCOPE = ("exporters/grafana", "metrics/records", "metrics/slo.py", "metrics/burst.py", "exporters/files.py",
         "exporters/console.py", "exporters/failure_notes.py")

ALLOWED = {
    # the server's own figures, passed through as it sent them (unknown keys kept): RequestRecord.server,
    # and a raw records.jsonl line before it is checked (RequestRecord.from_dict)
    "metrics/records/record.py": 2,
    # a raw line being checked (_lists_problem, _objects_problem); the server's figures in RecordLine
    "metrics/records/record_check.py": 3,
    "metrics/records/columns.py": 1,  # the server's figures, read for their three phases
    # summary.json as the summary builder made it, parsed by SummaryView.from_json (summary_csv_rows,
    # write_summary_csv); Arrow's columns (pyarrow is untyped)
    "exporters/files.py": 3,
    "exporters/console.py": 1,  # summary.json, parsed by SummaryView.from_json
    "exporters/failure_notes.py": 1,  # summary.json's `requests`, parsed by Requests.from_json
}


def test_untyped_json_objects_only_where_listed() -> None:
    found = counts(SCOPE)
    over = {name: (count, ALLOWED.get(name, 0)) for name, count in found.items() if count > ALLOWED.get(name, 0)}
    assert not over, f"untyped JSON objects (found, allowed): {over}"
    assert sum(found.values()) <= sum(ALLOWED.values()) == 11


def test_no_alias_hides_one() -> None:
    assert not aliases(SCOPE)



def test_record_line_names_every_checked_field_and_only_those() -> None:
    checked = {*INT64_FIELDS, *STRING_FIELDS, *BOOL_FIELDS, *LIST_FIELDS, *OBJECT_FIELDS}
    hints = typing.get_type_hints(RecordLine, include_extras=True)
    assert set(hints) == checked == set(RequestRecord.__dataclass_fields__)
    required = {name for name, hint in hints.items() if typing.get_origin(hint) is typing.Required}
    assert required == {"id", "intended_ns", "status"}
    assert {name for name in INT64_FIELDS if hints[name] == int | None} == set(INT64_FIELDS) - required
