"""`gc_paused`: the cyclic garbage collector off for a block, then back as it was.

For work that allocates and frees many small objects that are all freed by their reference counts (the
columns of 100k records, a virtual run's millions of steps' objects): each collection would only walk
every live object again (seconds on a large report, 12-16 % of a virtual run's CPU). What little is cyclic
is collected after the block.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
