"""The shapes of plain data the package takes and gives: messages, chat
declarations, a prompt key's settings, renderers."""

from typing import Any, Callable, Literal, TypedDict, Union

Renderer = Union[
    str,
    Callable[[Any, str], str],
    Callable[[Any], str],
    Callable[[], str],
]
"""A piece of prompt text: a ``str``, or a callable given the render's
context and locale (or fewer of them) returning a ``str``."""


class Message(TypedDict):
    """A chat message, as OpenAI's chat format has it."""

    role: str
    content: str


class DeclaredMessage(TypedDict):
    """A message a chat prompt declares; its content may be computed."""

    role: str
    content: Renderer


class HistoryPlaceholder(TypedDict):
    """Where the messages passed under ``history`` at render time go."""

    history: str


ChatItem = Union[DeclaredMessage, HistoryPlaceholder]
"""One item of a chat prompt's declaration."""


class PromptConfig(TypedDict, total=False):
    """The settings of one prompt key: the ``prompts.<key>`` block."""

    mode: Literal["override", "append", "global-local", "local", "global-local-merge", "off"]
    inline: str
    file: str
