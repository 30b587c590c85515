"""Text and tokens for the reference server: its tokenizer and chat template (also used by the load
generator to count the bundled server's tokens exactly).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from refserver.text.chat_template import ChatTemplate, Message, load_chat_template, render_byte_chat
    from refserver.text.tokenizer import (
        ByteTokenizer,
        HFTokenizer,
        Tokenizer,
        load_tokenizer,
        read_tokenizer_config,
    )

__all__ = [
    "ByteTokenizer", "ChatTemplate", "HFTokenizer", "Message", "Tokenizer", "load_chat_template",
    "load_tokenizer", "read_tokenizer_config", "render_byte_chat",
]

__getattr__ = lazy_names(__name__, {
    "ChatTemplate": "chat_template", "Message": "chat_template", "load_chat_template": "chat_template",
    "render_byte_chat": "chat_template",
    "ByteTokenizer": "tokenizer", "HFTokenizer": "tokenizer", "Tokenizer": "tokenizer",
    "load_tokenizer": "tokenizer", "read_tokenizer_config": "tokenizer",
})
