"""Late prefix-cache registration for the fast decode (refserver.engine.fast_decode): which quiet sequences
may register the blocks they fill when they wake, all in one `BlockManager.cache_full_blocks` call, instead
of one block at a time at an event of their own as each fills.

Registering late changes nothing where no lookup, registration or eviction can meet the sequence's blocks
before it wakes. Every chain hash through a sequence's blocks starts at its first block's, so that holds
while no other request ever added to the engine has the same first block (its content: the prompt's first
tokens, then the constant token where the prompt is shorter than a block), and while the sequence was
never preempted (its recompute would meet its own older copies in the cache). A request arriving with a
late sequence's first block makes that one register at once, between steps, where the step-by-step engine
had already registered them. Unequal blocks with equal hashes are not looked for: nothing registers late
with a hash function other than the default `chain_hash`, whose 64-bit hashes of distinct contents meet
with negligible probability.

A late sequence's events are the steps at which it needs a block (as without prefix caching), not those at
which a block of it fills.
"""

from __future__ import annotations

from refserver.engine.sequence import Sequence


class LateRegistration:
    def __init__(self, block_size: int, token: int, *, enabled: bool) -> None:
        self.enabled = enabled
        self._bs = block_size
        self._pad = [token] * block_size
        self.late: dict[Sequence, tuple[int, ...]] = {}  # quiet sequences registering late → their first block
        self._holder: dict[tuple[int, ...], Sequence] = {}  # the reverse: at most one per first block
        self._added: dict[tuple[int, ...], int] = {}  # first block → requests ever added with it
        self._preempted: set[Sequence] = set()

    def first_block(self, token_ids: list[int]) -> tuple[int, ...]:
        """The content the sequence's first block has or will have (its tokens past the prompt are constant)."""
        head = token_ids[: self._bs]
        return tuple(head) if len(head) == self._bs else tuple(head + self._pad[len(head) :])

    def added(self, seq: Sequence) -> Sequence | None:
        """Count a new request's first block; the late sequence that shares it (it must register now), if any."""
        if not self.enabled:
            return None
        key = self.first_block(seq.token_ids)
        self._added[key] = self._added.get(key, 0) + 1
        other = self._holder.pop(key, None)
        if other is not None:
            del self.late[other]
        return other

    def defer(self, seq: Sequence) -> None:
        """seq goes quiet: it registers late where no other request ever had its first block."""
        if not self.enabled or seq in self._preempted:
            return
        key = self.first_block(seq.token_ids)
        if self._added.get(key) == 1:
            self.late[seq] = key
            self._holder[key] = seq

    def woken(self, seq: Sequence) -> bool:
        """seq leaves the quiet set: whether it was registering late (then it must register now)."""
        key = self.late.pop(seq, None)
        if key is None:
            return False
        del self._holder[key]
        return True

    def preempted(self, seq: Sequence) -> None:
        self._preempted.add(seq)
