"""The torch runner's CUDA setting: scaled_dot_product_attention kept off cuDNN's backend (bench/README.md,
'The reference server on a GPU': prefill steps 4.6-6.3x slower with it on an H200)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from refserver.engine.runner import TorchModelRunner, disable_cudnn_attention  # noqa: E402


def test_disable_cudnn_attention_turns_the_backend_off() -> None:
    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        disable_cudnn_attention()
        assert torch.backends.cuda.cudnn_sdp_enabled() is False
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


def test_a_cpu_runner_leaves_the_setting_alone(model: object) -> None:
    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        TorchModelRunner(model, num_blocks=4, block_size=4)  # type: ignore[arg-type]
        assert torch.backends.cuda.cudnn_sdp_enabled() is (next(model.parameters()).device.type != "cuda")  # type: ignore[attr-defined]
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)
