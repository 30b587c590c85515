"""Image inputs for vision-language models: the options (`spec`), synthetic images (`synth`), their
attachment to each request (`attach`) and images carried by a dataset's rows (`dataset`).

Images travel as chat content parts (`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`)
inside `WorkItem.messages`; `WorkItem.images`, `image_pixels` and `image_bytes` hold their totals.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.workload.images.attach import ImageWorkload, add_pictures
    from loadgen.workload.images.dataset import (
        ImageFiles,
        check_endpoint,
        resolve_parts,
        row_references,
        strip_placeholders,
    )
    from loadgen.workload.images.spec import ImageSpec
    from loadgen.workload.images.synth import ImageMaker

__all__ = [
    "ImageFiles", "ImageMaker", "ImageSpec", "ImageWorkload", "add_pictures", "check_endpoint",
    "resolve_parts", "row_references", "strip_placeholders",
]

__getattr__ = lazy_names(__name__, {
    "ImageWorkload": "attach", "add_pictures": "attach",
    "ImageFiles": "dataset", "check_endpoint": "dataset", "resolve_parts": "dataset",
    "row_references": "dataset", "strip_placeholders": "dataset",
    "ImageSpec": "spec",
    "ImageMaker": "synth",
})
