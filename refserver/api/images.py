"""Image inputs on a text-only model: each `image_url` part of a chat message stands for IMAGE_TOKENS
prompt tokens, so a client's image requests can be tested end to end against this server.

The model never sees pixels (it has no vision encoder) and the URL is never fetched or decoded. The
tokens are drawn from a hash of the URL: the same image gives the same tokens (a second request with it
hits the prefix cache, as a VLM server's multimodal cache would serve it), two images give different ones.
They come after the chat template's text, and `usage.prompt_tokens` counts them, as a VLM server's usage
counts its image tokens.
"""

from __future__ import annotations

import hashlib

IMAGE_TOKENS = 64


def image_token_ids(urls: list[str], vocab_size: int) -> list[int]:
    """IMAGE_TOKENS token ids per image, a function of its URL alone."""
    ids: list[int] = []
    for url in urls:
        digest = hashlib.shake_128(url.encode("utf-8", "surrogatepass")).digest(4 * IMAGE_TOKENS)
        ids += [int.from_bytes(digest[i:i + 4], "little") % vocab_size for i in range(0, len(digest), 4)]
    return ids
