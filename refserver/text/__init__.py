"""Text and tokens for the reference server: its tokenizer and chat template (also used by the load
generator to count the bundled server's tokens exactly)."""
