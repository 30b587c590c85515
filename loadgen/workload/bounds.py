"""The largest lengths, counts and times goodput accepts, and the checks that hold every input to them.

A value past these is refused before anything is sent (one line naming the option, or the file and line),
so no input can make the client build a prompt, a schedule or a request body that no server would take,
or that the client's own memory cannot hold (docs/run-config.md, "Limits").

- MAX_TOKENS: prompt or output tokens of one request (`--prompt-tokens`, `--output-tokens`,
  `--prefix-tokens`, `--min-tokens`, a trace's `input_length`/`output_length`, a dataset's `max_tokens`):
  the longest context windows served today are 10M tokens. The server's own `max_model_len`, when its
  `/v1/models` entry gives one, is checked at the start of the run (loadgen.run.model_len).
- MAX_BODY_BYTES: one request body. A longer prompt is refused before the body is encoded, and no
  bigger body is sent: the request ends as `invalid_request` (loadgen.http.payload).
- MAX_REQUESTS: requests one run plans (`--requests`, or `--rate` × `--duration`); the schedule is drawn
  up front.
- MAX_HORIZON_S: any duration option, how far a trace's timestamps may lie from its start, and when the
  last request of a schedule may leave (a year: the longest public traces cover a few months).
"""

from __future__ import annotations

MAX_TOKENS = 10_000_000
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_REQUESTS = 10_000_000
MAX_CONCURRENCY = 100_000
MAX_CONNECTIONS = 100_000
MAX_WORKERS = 1024
MAX_PREFIX_GROUPS = 10_000
MAX_PREFIX_TOTAL_TOKENS = 20_000_000  # the shared prefixes are all built before the first request
MAX_HORIZON_S = 366 * 86_400.0
MAX_TURNS = 100_000


def check_count(value: int | float | None, flag: str, limit: int | float) -> None:
    """ValueError naming `flag` when `value` is over `limit`."""
    if value is not None and value > limit:
        raise ValueError(f"{flag} {value:g}: at most {limit:,g}" if isinstance(value, float)
                         else f"{flag} {value}: at most {limit:,}")


def check_tokens(value: int | float, where: str, name: str) -> None:
    """ValueError for a file's row (`where` is `PATH:LINE`) asking for more than MAX_TOKENS."""
    if value > MAX_TOKENS:
        shown = f"{value:.6g}" if isinstance(value, float) or value > 1e15 else str(value)
        raise ValueError(f"{where}: {name} {shown} is over the {MAX_TOKENS:,}-token limit of one request")
