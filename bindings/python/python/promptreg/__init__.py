"""One registry for every system prompt an LLM application sends.

The registry (``PromptRegistry``, and ``prompt_registry``, the process-wide
one), chat prompts, packs, the user's configuration, following a
``promptreg serve`` server and the stateless resolver, from the promptreg
Rust library. ``bindings/python/README.md`` is the guide.
"""

import atexit

from ._promptreg import (
    ChatRequest,
    ChatTrace,
    ConfigError,
    ConfigSpec,
    Diagnostic,
    FollowChange,
    Follower,
    FollowStatus,
    LoadReport,
    LocaleMatch,
    LookupStep,
    MessageSource,
    Pack,
    PartOrigin,
    PartProvenance,
    PromptRegistry,
    PromptregError,
    ReloadEvent,
    RemoteError,
    RenderError,
    ResolvedPrompt,
    SettingRef,
    SignatureError,
    Trace,
    TraceMessage,
    TracePart,
    UnknownPromptError,
    Watcher,
    __version__,
    check,
    check_settings,
    close_all,
    resolve_prompt,
)
from ._types import ChatItem, Message, PromptConfig, Renderer

prompt_registry: PromptRegistry = PromptRegistry()
"""The process-wide registry: every module that imports it shares it."""

# Watchers and followers call Python from their own threads: they stop
# before the interpreter finalizes.
atexit.register(close_all)

__all__ = [
    "ChatItem",
    "ChatRequest",
    "ChatTrace",
    "ConfigError",
    "ConfigSpec",
    "Diagnostic",
    "FollowChange",
    "FollowStatus",
    "Follower",
    "LoadReport",
    "LocaleMatch",
    "LookupStep",
    "Message",
    "MessageSource",
    "Pack",
    "PartOrigin",
    "PartProvenance",
    "PromptConfig",
    "PromptRegistry",
    "PromptregError",
    "ReloadEvent",
    "RemoteError",
    "RenderError",
    "Renderer",
    "ResolvedPrompt",
    "SettingRef",
    "SignatureError",
    "Trace",
    "TraceMessage",
    "TracePart",
    "UnknownPromptError",
    "Watcher",
    "__version__",
    "check",
    "check_settings",
    "close_all",
    "prompt_registry",
    "resolve_prompt",
]
