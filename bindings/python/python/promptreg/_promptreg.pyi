"""Types of the native module; the package ``promptreg`` re-exports it."""

import builtins
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Optional, Union, final

from ._types import ChatItem, Message, PromptConfig, Renderer

__all__ = [
    "__version__",
    "PromptregError",
    "UnknownPromptError",
    "ConfigError",
    "RenderError",
    "RemoteError",
    "SignatureError",
    "PromptRegistry",
    "ChatRequest",
    "Pack",
    "ConfigSpec",
    "Diagnostic",
    "LoadReport",
    "Trace",
    "TracePart",
    "PartOrigin",
    "LocaleMatch",
    "PartProvenance",
    "SettingRef",
    "LookupStep",
    "ChatTrace",
    "TraceMessage",
    "MessageSource",
    "Watcher",
    "ReloadEvent",
    "Follower",
    "FollowStatus",
    "FollowChange",
    "ResolvedPrompt",
    "check",
    "check_settings",
    "resolve_prompt",
    "close_all",
]

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_History = Mapping[str, Sequence[Message]]

class PromptregError(Exception):
    """The base of every promptreg exception."""

    code: str
    """The library's kind, kebab-case: ``invalid-id``, ``unknown-id``, ``config``..."""
    id: Optional[str]
    locale: Optional[str]
    suggestion: Optional[str]
    diagnostics: list[Diagnostic]

class UnknownPromptError(PromptregError):
    """No prompt is registered under the id (``code`` is ``unknown-id``)."""

class ConfigError(PromptregError):
    """A pack, a settings file or a prompt file is invalid; see ``diagnostics``."""

class RenderError(PromptregError):
    """A renderer raised (see ``__cause__``) or returned a non-``str``, or a template failed."""

class RemoteError(PromptregError):
    """A server or a bundle could not be used."""

class SignatureError(PromptregError):
    """A bundle's signature is missing or not from a trusted key."""

@final
class Diagnostic:
    """A problem in a configuration, a pack or a settings file, and where."""

    @property
    def severity(self) -> Literal["error", "warning", "note"]: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def file(self) -> Optional[str]: ...
    @property
    def line(self) -> Optional[int]: ...
    @property
    def column(self) -> Optional[int]: ...
    @property
    def key_path(self) -> Optional[str]: ...
    @property
    def suggestion(self) -> Optional[str]: ...

@final
class LoadReport:
    """What a load or reload changed."""

    @property
    def changed(self) -> list[str]: ...
    @property
    def warnings(self) -> list[Diagnostic]: ...

@final
class ConfigSpec:
    """What an application declares about its users' configuration."""

    def __new__(
        cls,
        name: str,
        *,
        keys: Sequence[str] = ...,
        key_patterns: Sequence[str] = ...,
        prompts_dir: str = ...,
        settings_file: Optional[str] = ...,
        global_settings_file: Optional[str] = ...,
        local_settings_file: Optional[str] = ...,
        settings_env: Optional[str] = ...,
        legacy_aliases: Mapping[str, str] = ...,
        legacy_files: Mapping[str, str] = ...,
        max_file_size: Optional[int] = ...,
    ) -> ConfigSpec: ...
    @property
    def name(self) -> str: ...
    @property
    def keys(self) -> list[str]: ...
    @property
    def key_patterns(self) -> list[str]: ...
    @property
    def prompts_dir(self) -> str: ...
    @property
    def global_settings_file(self) -> Optional[str]: ...
    @property
    def local_settings_file(self) -> Optional[str]: ...
    @property
    def settings_env(self) -> Optional[str]: ...

@final
class LookupStep:
    @property
    def key(self) -> str: ...
    @property
    def step(self) -> Literal["exact", "parent", "same-script", "fallback"]: ...

@final
class LocaleMatch:
    @property
    def locale(self) -> str: ...
    @property
    def step(self) -> str: ...

@final
class PartOrigin:
    @property
    def kind(self) -> Literal[
        "pinned-head", "default", "override", "user", "pinned-tail", "appender", "global-appender"
    ]: ...
    @property
    def label(self) -> str: ...
    @property
    def index(self) -> Optional[int]: ...
    @property
    def locale(self) -> Optional[str]: ...
    @property
    def step(self) -> Optional[str]: ...
    @property
    def replaces_body(self) -> Optional[bool]: ...
    @property
    def translation(self) -> Optional[LocaleMatch]: ...

@final
class SettingRef:
    @property
    def file(self) -> str: ...
    @property
    def key_path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...

@final
class PartProvenance:
    @property
    def source(self) -> Literal["code", "pack", "user"]: ...
    @property
    def what(self) -> str: ...
    @property
    def file(self) -> Optional[str]: ...
    @property
    def target(self) -> Optional[str]: ...
    @property
    def locale(self) -> Optional[str]: ...
    @property
    def mode(self) -> Optional[str]: ...
    @property
    def chosen_by(self) -> Optional[SettingRef]: ...
    @property
    def version(self) -> Optional[int]: ...
    @property
    def digest(self) -> Optional[str]: ...
    @property
    def label(self) -> Optional[str]: ...
    @property
    def revision(self) -> Optional[int]: ...
    @property
    def split(self) -> Optional[int]: ...
    @property
    def stale(self) -> bool: ...

@final
class TracePart:
    """One part of a rendered text: ``text[part.start:part.end] == part.text``."""

    @property
    def origin(self) -> PartOrigin: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def byte_range(self) -> tuple[int, int]: ...
    @property
    def text(self) -> str: ...
    @property
    def provenance(self) -> Optional[PartProvenance]: ...
    @property
    def snippets(self) -> list[str]: ...

@final
class Trace:
    """A rendered prompt with where each part came from."""

    @property
    def id(self) -> str: ...
    @property
    def locale(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def lookup(self) -> list[LookupStep]: ...
    @property
    def parts(self) -> list[TracePart]: ...
    @property
    def model(self) -> Optional[dict[str, Any]]: ...
    @property
    def metadata(self) -> Optional[dict[str, Any]]: ...
    @property
    def trace_attributes(self) -> dict[str, Union[str, int]]: ...

@final
class MessageSource:
    @property
    def kind(self) -> Literal["prompt", "history"]: ...
    @property
    def index(self) -> int: ...
    @property
    def name(self) -> Optional[str]: ...

@final
class TraceMessage:
    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def parts(self) -> list[TracePart]: ...
    @property
    def source(self) -> MessageSource: ...

@final
class ChatTrace:
    """A rendered chat prompt with where each part of each message came from."""

    @property
    def id(self) -> str: ...
    @property
    def locale(self) -> str: ...
    @property
    def lookup(self) -> list[LookupStep]: ...
    @property
    def messages(self) -> list[TraceMessage]: ...
    @property
    def model(self) -> Optional[dict[str, Any]]: ...
    @property
    def metadata(self) -> Optional[dict[str, Any]]: ...
    @property
    def trace_attributes(self) -> dict[str, Union[str, int]]: ...

@final
class ChatRequest:
    """A rendered chat prompt ready to send, with its model settings."""

    @property
    def id(self) -> str: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def model(self) -> dict[str, Any]: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    def openai(self) -> dict[str, Any]:
        """Keyword arguments of ``client.chat.completions.create``."""
    def anthropic(self) -> dict[str, Any]:
        """Keyword arguments of ``client.messages.create``."""
    def __len__(self) -> int: ...

@final
class ReloadEvent:
    @property
    def kind(self) -> Literal["reloaded", "failed"]: ...
    @property
    def report(self) -> Optional[LoadReport]: ...
    @property
    def code(self) -> Optional[str]: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def diagnostics(self) -> list[Diagnostic]: ...

@final
class Watcher:
    """A running watch: ``close()`` stops it; also a context manager."""

    def close(self) -> None: ...
    @property
    def is_open(self) -> bool: ...
    def __enter__(self) -> Watcher: ...
    def __exit__(
        self,
        kind: Optional[type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

@final
class FollowChange:
    @property
    def kind(self) -> Literal["updated", "failed", "connected", "disconnected", "event"]: ...
    @property
    def source(self) -> Optional[Literal["server", "cache", "bundle", "local"]]: ...
    @property
    def etag(self) -> Optional[str]: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def event_id(self) -> Optional[str]: ...
    @property
    def event(self) -> Optional[str]: ...

@final
class FollowStatus:
    @property
    def server(self) -> str: ...
    @property
    def pack(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def source(self) -> Literal["server", "cache", "bundle", "local"]: ...
    @property
    def verified_by(self) -> Optional[str]: ...
    @property
    def etag(self) -> Optional[str]: ...
    @property
    def revision(self) -> Optional[int]: ...
    @property
    def versions(self) -> dict[str, int]: ...
    @property
    def instance(self) -> str: ...
    @property
    def report_error(self) -> Optional[str]: ...
    @property
    def split(self) -> Optional[tuple[int, float]]: ...
    @property
    def since_last_sync(self) -> Optional[float]: ...
    @property
    def since_last_report(self) -> Optional[float]: ...
    @property
    def connected(self) -> bool: ...
    @property
    def last_event_id(self) -> Optional[str]: ...
    @property
    def last_error(self) -> Optional[str]: ...
    @property
    def cache_warning(self) -> Optional[str]: ...

@final
class Follower:
    """A running follower: ``close()`` stops it; also a context manager."""

    def status(self) -> FollowStatus: ...
    def resync(self) -> None: ...
    def wait_for_first_sync(self, timeout: float) -> bool: ...
    @property
    def pack(self) -> Optional[Pack]: ...
    def close(self) -> None: ...
    @property
    def is_open(self) -> bool: ...
    def __enter__(self) -> Follower: ...
    def __exit__(
        self,
        kind: Optional[type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

@final
class Pack:
    """Prompts declared in a folder, or in a baked bundle."""

    @staticmethod
    def load(dir: _Path) -> Pack: ...
    @staticmethod
    def from_bundle(path: _Path, *, trust_keys: Optional[Sequence[str]] = None) -> Pack: ...
    @staticmethod
    def check(dir: _Path) -> list[Diagnostic]: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def ids(self) -> list[str]: ...
    @property
    def warnings(self) -> list[Diagnostic]: ...
    def config_spec(self) -> ConfigSpec: ...
    def install(self, registry: PromptRegistry) -> None: ...

@final
class ResolvedPrompt:
    @property
    def final(self) -> str: ...
    @property
    def injected(self) -> Optional[str]: ...
    @property
    def source(self) -> Literal["inline", "global", "local", "merged", "none"]: ...

@final
class PromptRegistry:
    """The registry of every system prompt of an application."""

    def __init__(self) -> None: ...
    def register_default(self, id: str, render: Renderer) -> None: ...
    def register(
        self,
        id: str,
        body: Renderer,
        *,
        head: Optional[Iterable[Renderer]] = None,
        tail: Optional[Iterable[Renderer]] = None,
        description: Optional[str] = None,
    ) -> None: ...
    def override(self, id: str, locale: str, render: Renderer) -> None: ...
    def translate_pin(
        self, id: str, locale: str, position: Literal["head", "tail"], index: int, render: Renderer
    ) -> None: ...
    def append(self, id: str, extra: Renderer) -> None: ...
    def append_all(self, extra: Renderer) -> None: ...
    def render(
        self, id: str, ctx: Any = None, locale: Optional[str] = None, *, subject: Optional[str] = None
    ) -> str: ...
    def render_traced(
        self, id: str, ctx: Any = None, locale: Optional[str] = None, *, subject: Optional[str] = None
    ) -> Trace: ...
    def explain(
        self, id: str, ctx: Any = None, locale: Optional[str] = None, *, subject: Optional[str] = None
    ) -> Trace: ...
    def render_for(
        self, subject: str, id: str, ctx: Any = None, locale: Optional[str] = None
    ) -> str: ...
    def render_traced_for(
        self, subject: str, id: str, ctx: Any = None, locale: Optional[str] = None
    ) -> Trace: ...
    def arm_for(self, subject: str) -> Optional[tuple[int, Literal["stable", "candidate"]]]: ...
    def register_chat(
        self,
        id: str,
        messages: Iterable[ChatItem],
        *,
        head: Optional[Iterable[Renderer]] = None,
        tail: Optional[Iterable[Renderer]] = None,
        description: Optional[str] = None,
        attach: Optional[int] = None,
        model: Optional[Mapping[str, Any]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    def override_chat(self, id: str, locale: str, messages: Iterable[ChatItem]) -> None: ...
    def render_messages(
        self,
        id: str,
        ctx: Any = None,
        locale: Optional[str] = None,
        history: Optional[_History] = None,
        *,
        subject: Optional[str] = None,
    ) -> builtins.list[Message]: ...
    def render_chat(
        self,
        id: str,
        ctx: Any = None,
        locale: Optional[str] = None,
        history: Optional[_History] = None,
        *,
        subject: Optional[str] = None,
    ) -> ChatRequest: ...
    def render_messages_traced(
        self,
        id: str,
        ctx: Any = None,
        locale: Optional[str] = None,
        history: Optional[_History] = None,
        *,
        subject: Optional[str] = None,
    ) -> ChatTrace: ...
    def render_chat_as_text(
        self,
        id: str,
        ctx: Any = None,
        locale: Optional[str] = None,
        history: Optional[_History] = None,
        *,
        subject: Optional[str] = None,
    ) -> str: ...
    def provider_request(
        self,
        id: str,
        ctx: Any = None,
        locale: Optional[str] = None,
        history: Optional[_History] = None,
        *,
        format: Literal["openai", "openai-responses", "anthropic", "gemini"],
        subject: Optional[str] = None,
    ) -> dict[str, Any]: ...
    def is_chat(self, id: str, locale: Optional[str] = None) -> bool: ...
    def model_settings(self, id: str, locale: Optional[str] = None) -> Optional[dict[str, Any]]: ...
    def reset(self, id: Optional[str] = None) -> None: ...
    def has(self, id: str) -> bool: ...
    def list(self) -> builtins.list[str]: ...
    def __contains__(self, id: str, /) -> bool: ...
    def __len__(self) -> int: ...
    def set_locale(self, locale: str) -> None: ...
    @property
    def locale(self) -> str: ...
    def set_fallback_locale(self, locale: str) -> None: ...
    @property
    def fallback_locale(self) -> str: ...
    def load_config(
        self,
        spec: ConfigSpec,
        *,
        home: str,
        cwd: Optional[str] = None,
        settings_env: Optional[str] = None,
    ) -> LoadReport: ...
    def reload(self) -> LoadReport: ...
    def unload_config(self) -> None: ...
    def watch(
        self, callback: Callable[[ReloadEvent], object], *, debounce: Optional[float] = None
    ) -> Watcher: ...
    def follow(
        self,
        server: str,
        *,
        pack: str,
        label: Optional[str] = None,
        key: Optional[str] = None,
        cache_dir: Optional[str] = None,
        disk_cache: bool = True,
        poll_interval: Optional[float] = None,
        timeout: Optional[float] = None,
        idle_timeout: Optional[float] = None,
        report_interval: Optional[float] = None,
        reports: bool = True,
        instance_id: Optional[str] = None,
        instance_name: Optional[str] = None,
        trust_keys: Optional[Sequence[str]] = None,
        bundle: Optional[str] = None,
        on_change: Optional[Callable[[FollowChange], object]] = None,
    ) -> Follower: ...

def check(
    spec: ConfigSpec, *, home: str, cwd: Optional[str] = None, settings_env: Optional[str] = None
) -> list[Diagnostic]: ...
def check_settings(spec: ConfigSpec, path: str, text: str) -> list[Diagnostic]: ...
def resolve_prompt(
    key: str,
    cfg: Optional[PromptConfig],
    cwd: str,
    default: str,
    *,
    home: str,
    prompts_dir: str,
    locale: Optional[str] = None,
) -> ResolvedPrompt: ...
def close_all() -> None:
    """Closes every watcher and follower of the process (run at exit)."""
