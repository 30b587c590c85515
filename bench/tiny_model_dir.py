"""The reference server's tiny model as a local Hugging Face directory, for other servers to load.

`export_tiny(DIR)` writes config.json + model.safetensors (transformers' `save_pretrained` of a
`LlamaForCausalLM` holding exactly the weights of `refserver.model.tiny_model(seed)`), plus the byte
tokenizer as tokenizer.json + tokenizer_config.json with its chat template
(`refserver.text.tokenizer.save_byte_tokenizer`). `check_export(DIR)` proves the reference server reads the
very same tensors back (`refserver.model.load_model`) and the tokenizer the same ids, so
`goodput serve --model DIR` and `transformers serve DIR` serve one model.

Usage: .venv/bin/python -m bench.tiny_model_dir /tmp/goodput-tiny   (nothing is downloaded)
"""

from __future__ import annotations

import argparse
from pathlib import Path

SAMPLE_TEXT = "<|bos|><|user|>héllo, wörld 123 \u2028 xyz<|assistant|>"


def export_tiny(directory: str | Path, seed: int = 0) -> Path:
    """Write the tiny model of `seed` (float32) and the byte tokenizer to `directory`."""
    import transformers

    from refserver.model import tiny_config, tiny_model
    from refserver.text.tokenizer import save_byte_tokenizer

    out = Path(directory)
    ours = tiny_model(seed, dtype="float32", device="cpu")
    c = tiny_config()
    positions = c.max_position_embeddings
    assert positions is not None  # the tiny model always sets it
    hf_config = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_layers, num_attention_heads=c.num_heads, num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim, max_position_embeddings=positions, rms_norm_eps=c.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": c.rope_theta}, bos_token_id=c.bos_token_id,
        eos_token_id=c.eos_token_id, tie_word_embeddings=c.tie_word_embeddings,
    )  # fmt: skip
    hf = transformers.LlamaForCausalLM(hf_config)
    missing, unexpected = hf.load_state_dict(ours.state_dict(), strict=False)
    if unexpected or [m for m in missing if not m.endswith("rotary_emb.inv_freq")]:
        raise RuntimeError(
            f"tiny model does not map onto transformers' Llama: missing {missing}, unexpected {unexpected}"
        )
    hf.save_pretrained(str(out))
    save_byte_tokenizer(out)
    return out


def check_export(directory: str | Path, seed: int = 0) -> list[str]:
    """Differences between the directory and the tiny model of `seed`; empty when they are the same.

    Compares every weight tensor as the reference server loads it, and the token ids of a sample text
    (specials, multi-byte UTF-8, a line separator) under the directory's tokenizer.json and the byte tokenizer.
    """
    import torch

    from refserver.model import load_model, tiny_model
    from refserver.text.tokenizer import ByteTokenizer, load_tokenizer

    problems: list[str] = []
    loaded = load_model(directory, dtype="float32", device="cpu").state_dict()
    built = tiny_model(seed, dtype="float32", device="cpu").state_dict()
    if set(loaded) != set(built):
        problems.append(f"weight names differ: {sorted(set(loaded) ^ set(built))[:5]}")
    for name in sorted(set(loaded) & set(built)):
        if not torch.equal(loaded[name], built[name]):
            problems.append(f"weight {name} differs")
    ids_dir = load_tokenizer(Path(directory)).encode(SAMPLE_TEXT, add_bos=False)
    ids_byte = ByteTokenizer().encode(SAMPLE_TEXT, add_bos=False)
    if ids_dir != ids_byte:
        problems.append(
            f"tokenizer.json gives {ids_dir[:12]}... where the byte tokenizer gives {ids_byte[:12]}..."
        )
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = export_tiny(args.directory, args.seed)
    problems = check_export(out, args.seed)
    if problems:
        raise SystemExit("export check failed: " + "; ".join(problems))
    print(f"{out}: tiny model (seed {args.seed}) + byte tokenizer; reloads identically")


if __name__ == "__main__":
    main()
