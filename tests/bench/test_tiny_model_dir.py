"""The exported tiny model directory holds exactly the reference server's tiny model and tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.tiny_model_dir import check_export, export_tiny

pytestmark = pytest.mark.slow


def test_export_reloads_identically_and_a_changed_weight_is_caught(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    out = export_tiny(tmp_path / "tiny")
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (out / name).is_file()
    assert check_export(out) == []
    assert check_export(out, seed=1) != []  # another seed's weights are told apart
    weights = load_file(str(out / "model.safetensors"))
    weights["model.norm.weight"] = weights["model.norm.weight"] + 1e-3
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})
    assert check_export(out) == ["weight model.norm.weight differs"]
