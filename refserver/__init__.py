"""The bundled reference server: an OpenAI-compatible streaming server over a small paged-KV engine with a
torch model or a simulated one (`goodput serve`, `python -m refserver`; `cli.serve`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from refserver.cli import serve

__all__ = ["serve"]

__getattr__ = lazy_names(__name__, {
    "serve": "cli",
})
