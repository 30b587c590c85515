"""The dispatch core: sending a run's requests at their intended times and handing each finished record on.

What one dispatching process runs, the run's own (loadgen.run) or a worker's (loadgen.workers), both above
this folder; it imports neither.

- `Runner` (`runner`): an open loop on the schedule it is given (`RunPlan.offsets`, made once by
  loadgen.workload.schedule) or a closed loop of slots; exactly one record per request, handed to the
  record hooks (`RecordHook`, `deliver_record`), live counters in `RunState`. The wake-ups come from
  `alarm` (`make_alarm`), conversations' turns from `conversation`; `GcFreezer` (`gc_freeze`), a record
  hook, keeps the garbage collector's passes short.
- `RecordWriter` (`recorder`): records.jsonl appended as each request ends; `records_status`
  (`read_status`, `ended_by`): what the writer could not write, read back by `goodput report`.
- `Progress` (`progress`): the progress line.
- `client_config_of` (`client_config`): the streaming client's configuration from the spec and secrets.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.dispatch.alarm import make_alarm
    from loadgen.dispatch.client_config import client_config_of
    from loadgen.dispatch.gc_freeze import GcFreezer
    from loadgen.dispatch.progress import Progress
    from loadgen.dispatch.recorder import RecordWriteError, RecordWriter, encode_record
    from loadgen.dispatch.records_status import ended_by, read_status
    from loadgen.dispatch.runner import RecordHook, Runner, RunPlan, RunState, deliver_record

__all__ = ["GcFreezer", "Progress", "RecordHook", "RecordWriteError", "RecordWriter", "RunPlan", "RunState",
           "Runner", "client_config_of", "deliver_record", "encode_record", "ended_by", "make_alarm", "read_status"]

__getattr__ = lazy_names(__name__, {
    "make_alarm": "alarm",
    "client_config_of": "client_config",
    "Progress": "progress",
    "RecordWriteError": "recorder", "RecordWriter": "recorder", "encode_record": "recorder",
    "ended_by": "records_status", "read_status": "records_status",
    "GcFreezer": "gc_freeze",
    "RecordHook": "runner", "Runner": "runner", "RunPlan": "runner", "RunState": "runner",
    "deliver_record": "runner",
})
