"""The reference server's engine steps, collected beside the `/metrics` scrapes (loadgen.run.scrape).

A server that keeps a step log answers `GET /v1/goodput/steps?after=N` (refserver/README.md): its recent
engine steps, each with what it computed and how long it took. At the run's first scrape the collector
notes the newest step (the steps before the run are not the run's), then at every scrape takes the steps
since. Any other server answers 404 (or not JSON of that shape): the collector stops asking, and the run
has no `engine_steps.jsonl`. At most MAX_STEPS steps are kept (later ones are counted, not kept); steps
the server's ring let go between two scrapes are counted as dropped. `goodput calibrate` fits from these
steps when a run has them (docs/formats.md, engine_steps.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

MAX_STEPS = 200_000


def steps_url_for(metrics_url: str) -> str:
    return metrics_url.removesuffix("/metrics") + "/v1/goodput/steps"


class EngineSteps:
    def __init__(self, url: str, max_steps: int = MAX_STEPS) -> None:
        self.url = url
        self.max_steps = max_steps
        self.active = True  # until the server shows it has no step log
        self.fields: list[str] = []
        self.rows: list[list[float]] = []
        self.after: int | None = None  # None until the first poll
        self.dropped = 0
        self.over_limit = 0
        self.failures = 0

    def poll(self, client: httpx.Client) -> None:
        """Take the steps since the last poll (the first poll only notes where the run starts)."""
        if not self.active:
            return
        try:
            resp = client.get(self.url, params={"after": self.after or 0})
            if resp.status_code in (404, 405):
                self.active = False
                return
            resp.raise_for_status()
            body = resp.json()
            steps, last, fields = body["steps"], int(body["last"]), [str(f) for f in body["fields"]]
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            self.failures += 1
            if self.after is None:
                self.active = False  # not a step log: never ask again
            return
        if self.after is not None:
            self.fields = fields
            self.dropped += int(body.get("dropped", 0))
            room = max(0, self.max_steps - len(self.rows))
            self.rows.extend(steps[:room])
            self.over_limit += max(0, len(steps) - room)
        self.after = last

    def save(self, out_dir: Path) -> Path | None:
        """engine_steps.jsonl: a header line ({"fields", "dropped", "over_limit", "failed_polls"}), then one
        row per step in `fields` order; None (no file) when the server gave no steps."""
        from metrics.results import ENGINE_STEPS_FILE, write_atomic

        if not self.fields:
            return None
        path = out_dir / ENGINE_STEPS_FILE
        head = {"fields": self.fields, "dropped": self.dropped, "over_limit": self.over_limit,
                "failed_polls": self.failures}
        write_atomic(path, "".join(json.dumps(x) + "\n" for x in [head, *self.rows]).encode())
        return path
