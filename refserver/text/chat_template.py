"""Chat messages → the prompt text the model sees (its token count is the request's `prompt_tokens`).

Three templates, chosen by `load_chat_template`:
- the byte tokenizer's (default model): `<|bos|>` then, per message, `<|role|>content`, then
  `<|assistant|>` to open the reply. Roles: system, user, assistant (developer → system, tool → user).
- a model directory's own Jinja template: `chat_template` in `tokenizer_config.json` (a string, or a
  list of named templates of which "default" is used) or a `chat_template.jinja` file; rendered in a
  sandbox with `messages`, `add_generation_prompt=True`, `bos_token`, `eos_token`.
- a model directory without one: the plain template, per message `<|role|>\\ncontent\\n`, then
  `<|assistant|>\\n`, encoded with the tokenizer's own bos handling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from refserver.text.tokenizer import ByteTokenizer, Tokenizer, read_tokenizer_config

Message = dict[str, str]  # {"role": ..., "content": ...}, content already flattened to text

_BYTE_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "user"}


@dataclass(slots=True)
class ChatTemplate:
    """Renders messages to text; `add_bos` says whether encoding must add bos (the text lacks it)."""

    render_fn: Callable[[list[Message]], str]
    add_bos: bool
    name: str

    def render(self, messages: list[Message]) -> str:
        return self.render_fn(messages)


def render_byte_chat(messages: list[Message]) -> str:
    parts = ["<|bos|>"]
    for message in messages:
        role = _BYTE_ROLES.get(message["role"], "user")
        parts.append(f"<|{role}|>{message['content']}")
    parts.append("<|assistant|>")
    return "".join(parts)


def render_plain_chat(messages: list[Message]) -> str:
    body = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages)
    return body + "<|assistant|>\n"


def _raise_template_error(message: str) -> None:
    raise ValueError(f"chat template error: {message}")


def jinja_chat_template(source: str, *, bos_token: str | None, eos_token: str | None) -> ChatTemplate:
    """Compile a HF-style Jinja chat template (sandboxed: templates ship with downloaded models)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise_template_error
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    template = env.from_string(source)

    def render(messages: list[Message]) -> str:
        return str(template.render(messages=messages, add_generation_prompt=True, bos_token=bos_token or "",
                                   eos_token=eos_token or ""))

    return ChatTemplate(render_fn=render, add_bos=False, name="jinja")


def _template_source(model_dir: Path) -> str | None:
    source = read_tokenizer_config(model_dir).chat_template
    if source is not None:
        return source
    jinja_file = model_dir / "chat_template.jinja"
    if jinja_file.is_file():
        return jinja_file.read_text(encoding="utf-8")
    return None


def load_chat_template(model_dir: str | Path | None, tokenizer: Tokenizer) -> ChatTemplate:
    if model_dir is None or isinstance(tokenizer, ByteTokenizer):
        return ChatTemplate(render_fn=render_byte_chat, add_bos=False, name="byte")
    source = _template_source(Path(model_dir))
    if source is None:
        return ChatTemplate(render_fn=render_plain_chat, add_bos=True, name="plain")
    return jinja_chat_template(source, bos_token=tokenizer.bos_token, eos_token=tokenizer.eos_token)
