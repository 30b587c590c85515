"""Profile accounting: wrapped calls add wall and CPU time to their account, only while active."""

from __future__ import annotations

import threading
import time
import types

import pytest

from bench.profile_refserver import ROWS, exclusive, report_rows
from bench.time_accounts import Account, Accounts, overhead_per_call_ns, thread_cpu_ns


def _spin(seconds: float) -> int:
    end, n = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        n += 1
    return n


def test_wrap_counts_only_while_active_and_keeps_results() -> None:
    accounts = Accounts()
    holder = types.SimpleNamespace(work=_spin)
    accounts.wrap(holder, "work", "work")
    assert holder.work(0.01) > 0
    assert accounts.get("work").calls == 0
    accounts.active = True
    holder.work(0.03)
    holder.work(0.03)
    account = accounts.get("work")
    assert account.calls == 2
    assert account.wall_ns >= 60_000_000
    assert 0 < account.cpu_ns <= account.wall_ns + 5_000_000
    assert account.first_ns is not None and account.last_ns is not None and account.last_ns > account.first_ns
    accounts.reset()
    assert accounts.get("work").calls == 0


def test_wrapping_a_missing_function_is_refused() -> None:
    with pytest.raises(AttributeError, match="renamed"):
        Accounts().wrap(types.SimpleNamespace(), "gone", "gone")


def test_thread_cpu_clock_of_another_thread_advances_only_while_it_runs() -> None:
    started, spun, release = threading.Event(), threading.Event(), threading.Event()

    def worker() -> None:
        started.set()
        end = time.thread_time() + 0.1  # 0.1 s of this thread's CPU, however busy the machine is
        while time.thread_time() < end:
            pass
        spun.set()
        release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(5)
    assert thread.ident is not None
    assert spun.wait(30)
    busy = thread_cpu_ns(thread.ident)
    time.sleep(0.1)
    idle = thread_cpu_ns(thread.ident) - busy
    release.set()
    thread.join()
    assert busy >= 100_000_000 and idle < 20_000_000


def test_rows_subtract_nested_calls_and_attribute_thread_rest() -> None:
    accounts = Accounts()
    ms = 1_000_000
    for name, cpu in {
        "step": 10,
        "execute": 8,
        "forward": 5,
        "logits": 1,
        "sample": 1,
        "consume": 3,
        "detok_add": 2,
    }.items():
        accounts.by_name[name] = Account(calls=1, wall_ns=cpu * ms, cpu_ns=cpu * ms)
    assert exclusive(accounts, ("execute",), ("forward", "logits", "sample"), "cpu_ns") == 1 * ms
    clocks = {"engine": 12 * ms, "loop": 7 * ms, "process": 25 * ms}
    rows = dict((name, cpu) for name, cpu, _ in report_rows(accounts, clocks, tokens=1000))
    assert rows["forward (model + lm head)"] == pytest.approx(6.0)  # µs per token
    assert rows["runner input tensors"] == pytest.approx(1.0)
    assert rows["scheduler + block manager"] == pytest.approx(2.0)
    assert rows["step loop rest (locks, hand-over)"] == pytest.approx(2.0)
    assert rows["per-token bookkeeping (times, /metrics)"] == pytest.approx(1.0)
    assert rows["HTTP server + asyncio (event loop rest)"] == pytest.approx(4.0)
    assert rows["other threads (torch workers, ...)"] == pytest.approx(6.0)
    assert sum(rows.values()) == pytest.approx(25.0)  # every CPU ns of the process lands in one row
    assert len(rows) == len(ROWS) + 3


def test_instrumentation_cost_is_measured() -> None:
    cost = overhead_per_call_ns(2_000)
    assert 0 < cost < 1_000_000  # nanoseconds per timed call: clock reads, never a millisecond
