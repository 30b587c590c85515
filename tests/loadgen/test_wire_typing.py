"""The client's wire types stay typed: untyped JSON objects (`dict[str, Any]`, `Mapping[str, Any]`,
`dict[str, object]`, `Mapping[str, object]`) are left in loadgen/http, loadgen/workload, loadgen/types.py
and loadgen/tools.py only where JSON crosses the process's edge, each one listed here: the body as sent
(an API's body under the user's `--extra-body`, and a probe's), a server's event as parsed (checked as it is
read, per chunk), an httpcore trace callback's argument, and the record's `server` block. The user's own JSON
passed along (`--extra-body`, a tool's JSON schema) is a `JsonObject` (metrics.results); everything else has
a TypedDict or a dataclass."""

from __future__ import annotations

from tests.untyped_json import aliases, counts

SCOPE = ("loadgen/http", "loadgen/workload", "loadgen/types.py", "loadgen/tools.py")

ALLOWED = {
    "loadgen/http/payload.py": 4,  # the body sent: request_body, merge_body (extra, result), encode_body
    "loadgen/http/chunks.py": 4,  # an event as parsed, per chunk (event_object, _event, _tool_deltas),
    # and the record's server block (RequestRecord.server's type)
    "loadgen/http/send/probe.py": 1,  # a probe body sent (the API's probe under the user's extra body)
    "loadgen/http/api/responses.py": 2,  # the body sent; an event as parsed
    "loadgen/http/api/messages.py": 2,  # the body sent; an event as parsed
    "loadgen/http/api/registry.py": 1,  # an API's body builder
    "loadgen/http/api/events.py": 1,  # an API's event decoder
    "loadgen/http/send/client.py": 1,  # httpcore's trace callback
}


def test_untyped_json_objects_only_where_listed() -> None:
    found = counts(SCOPE)
    over = {name: (count, ALLOWED.get(name, 0)) for name, count in found.items() if count > ALLOWED.get(name, 0)}
    assert not over, f"untyped JSON objects (found, allowed): {over}"
    assert sum(found.values()) <= sum(ALLOWED.values()) == 16


def test_no_alias_hides_one() -> None:
    assert not aliases(SCOPE)
