"""Every provider request body the package renders, checked against the
providers' own SDK types: ``openai`` (Chat Completions, Responses),
``anthropic`` (Messages) and ``google-genai`` (Gemini ``generateContent``).

The SDKs' request params are TypedDicts, which pydantic checks loosely: an
unknown key passes, and an ``Iterable[...]`` field (``messages``, ``tools``)
is checked only when iterated, so a plain ``TypeAdapter`` lets a wrong role
or a tool without a name through. ``closed`` rebuilds the SDK's own schema
with every object closed and every iterable a list, so that all of the body
is checked, and nothing but what the SDK names is allowed."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, Optional

import pydantic
import pydantic_core
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic.alias_generators import to_camel

from promptreg import Pack, PromptRegistry

from .conftest import EXAMPLES, context

Format = Literal["openai", "openai-responses", "anthropic", "gemini"]
FORMATS: tuple[Format, ...] = ("openai", "openai-responses", "anthropic", "gemini")
PACKS = ("web-agent", "goal-agent")
# The prompt that takes the example history (its `conversation` placeholder).
WITH_HISTORY = "webagent-narrator.system"


class GenerateContentRequest(pydantic.BaseModel):
    """The REST body of Gemini's ``generateContent`` (the model is in its
    URL). google-genai has no model of the body itself, only of its parts,
    which are the REST ones with camelCase aliases and closed to other keys."""

    model_config = pydantic.ConfigDict(alias_generator=to_camel, extra="forbid")
    contents: list[genai.Content]
    system_instruction: Optional[genai.Content] = None
    tools: Optional[list[genai.Tool]] = None
    tool_config: Optional[genai.ToolConfig] = None
    safety_settings: Optional[list[genai.SafetySetting]] = None
    generation_config: Optional[genai.GenerationConfig] = None
    cached_content: Optional[str] = None


def _closed(schema: Any) -> Any:
    """A pydantic core schema with every object closed to keys it does not
    name, and every ``Iterable[...]`` (checked lazily) a list."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed = {key: _closed(value) for key, value in schema.items()}
    if closed.get("type") in ("typed-dict", "model-fields"):
        closed["extra_behavior"] = "forbid"
    elif closed.get("type") == "generator":
        kept = ("items_schema", "min_length", "max_length", "ref", "metadata")
        closed = {key: value for key, value in closed.items() if key in kept}
        closed["type"] = "list"
    return closed


@cache
def closed(params: Any) -> pydantic_core.SchemaValidator:
    return pydantic_core.SchemaValidator(_closed(pydantic.TypeAdapter(params).core_schema))


SDK_TYPES: dict[str, Any] = {
    "openai": CompletionCreateParamsNonStreaming,
    "openai-responses": ResponseCreateParamsNonStreaming,
    "anthropic": MessageCreateParamsNonStreaming,
}

# What the application adds to a prompt that names no model: the SDK types
# require these. Added only where the body lacks them, never over them.
CALLER: dict[str, dict[str, Any]] = {
    "openai": {"model": "gpt-4o-mini"},
    "anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 1024},
}


def gemini_problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    """What google-genai's types leave unchecked (a role and a function's
    name are free strings there, a JSON schema any value), as the REST
    reference states it."""
    problems = []
    for i, content in enumerate(body.get("contents", [])):
        if content.get("role") not in ("user", "model"):
            problems.append((f"contents.{i}.role", "gemini_role"))
    for t, tool in enumerate(body.get("tools", [])):
        for f, function in enumerate(tool.get("functionDeclarations", [])):
            if not isinstance(function.get("name"), str) or not function["name"]:
                problems.append((f"tools.{t}.functionDeclarations.{f}.name", "missing"))
            if not isinstance(function.get("parametersJsonSchema", {}), dict):
                problems.append((f"tools.{t}.functionDeclarations.{f}.parametersJsonSchema", "dict_type"))
    if not isinstance(body.get("generationConfig", {}).get("responseJsonSchema", {}), dict):
        problems.append(("generationConfig.responseJsonSchema", "dict_type"))
    return problems


def problems(format: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``body`` is not what the provider's SDK types take: each error's
    path and pydantic's error type; empty when it is."""
    body = {**CALLER.get(format, {}), **body}
    found = []
    # google-genai only warns of an enum value it does not know.
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            if format == "gemini":
                GenerateContentRequest.model_validate_json(json.dumps(body), strict=True)
            else:
                closed(SDK_TYPES[format]).validate_json(json.dumps(body), strict=True)
        except pydantic.ValidationError as error:
            found = [(".".join(map(str, e["loc"])), e["type"]) for e in error.errors()]
    found += [("", f"warning: {w.message}") for w in warned]
    return found + (gemini_problems(body) if format == "gemini" else [])


# Where the bodies rendered now differ from the SDKs: each fix removes its
# line here (the test then fails until it does, so the list cannot go stale).
# A pack writes its settings in Chat Completions' words, renamed for each
# provider; `temperature` is one Anthropic's API takes and this SDK's
# MessageCreateParams does not name (the chat tests pass it as `extra_body`).
KNOWN: dict[tuple[str, str], list[tuple[str, str]]] = {
    (WITH_HISTORY, "anthropic"): [("temperature", "extra_forbidden")],
}


@cache
def registry(pack: str) -> PromptRegistry:
    prompts = PromptRegistry()
    Pack.load(str(EXAMPLES / pack)).install(prompts)
    return prompts


def render(pack: str, id: str, locale: str, format: Format) -> dict[str, Any]:
    history = None
    if id == WITH_HISTORY:
        history = json.loads((EXAMPLES / pack / "history.json").read_text(encoding="utf-8"))
    return registry(pack).provider_request(id, context(pack), locale, history, format=format)


CASES = [
    (pack, id, locale, format)
    for pack in PACKS
    for id in Pack.load(str(EXAMPLES / pack)).ids
    for locale in ("en", "ja")
    for format in FORMATS
]


@pytest.mark.parametrize(("pack", "id", "locale", "format"), CASES)
def test_every_body_is_what_the_sdk_takes(pack: str, id: str, locale: str, format: Format) -> None:
    assert problems(format, render(pack, id, locale, format)) == KNOWN.get((id, format), [])


# Where each format puts the output schema.
OUTPUT_SCHEMA = {
    "openai": ("response_format", "json_schema", "schema"),
    "openai-responses": ("text", "format", "schema"),
    "anthropic": ("output_config", "format", "schema"),
    "gemini": ("generationConfig", "responseJsonSchema"),
}


def _at(body: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The object that holds the last key of ``path``."""
    for key in path[:-1]:
        body = body[key]
    return body


@pytest.mark.parametrize("format", FORMATS)
def test_the_cases_carry_tools_and_an_output_schema(format: Format) -> None:
    """Else the check above would check little of each format."""
    assert render("web-agent", WITH_HISTORY, "en", format)["tools"]
    path = OUTPUT_SCHEMA[format]
    schema = _at(render("goal-agent", "auditor", "en", format), path)[path[-1]]
    assert schema["required"] == ["verdict", "tasks"]


def _messages(format: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    key = {"openai-responses": "input", "gemini": "contents"}.get(format, "messages")
    messages: list[dict[str, Any]] = body[key]
    return messages


def _tool(format: str, body: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = body["tools"][0]
    if format == "openai":
        tool = tool["function"]
    elif format == "gemini":
        tool = tool["functionDeclarations"][0]
    return tool


PARAMETERS = {"openai": "parameters", "openai-responses": "parameters", "anthropic": "input_schema", "gemini": "parametersJsonSchema"}
Mutation = Callable[[str, dict[str, Any]], None]
MUTATIONS: dict[str, Mutation] = {
    "a role the provider has not": lambda f, b: _messages(f, b)[-1].update(role="assistant" if f == "gemini" else "bot"),
    "a tool without a name": lambda f, b: _tool(f, b).pop("name"),
    "a tool's name a number": lambda f, b: _tool(f, b).update(name=5),
    "a tool's parameters a string": lambda f, b: _tool(f, b).update({PARAMETERS[f]: "{}"}),
    "an unknown key at the top": lambda f, b: b.update(bogus=1),
    "an unknown key in a tool": lambda f, b: _tool(f, b).update(bogus=1),
    "an unknown key in a message": lambda f, b: _messages(f, b)[-1].update(bogus=1),
    "a message's text a number": lambda f, b: (
        _messages(f, b)[-1]["parts"][0].update(text=5) if f == "gemini" else _messages(f, b)[-1].update(content=5)
    ),
    "a setting of the wrong type": lambda f, b: (
        b["generationConfig"].update(maxOutputTokens="800")
        if f == "gemini"
        else b.update({"max_output_tokens" if f == "openai-responses" else "max_tokens": "800"})
    ),
    "a tool choice the provider has not": lambda f, b: (
        b.update(toolConfig={"functionCallingConfig": {"mode": "SOMETIMES"}})
        if f == "gemini"
        else b.update(tool_choice={"type": "sometimes"} if f == "anthropic" else "sometimes")
    ),
    "another provider's tool shape": lambda f, b: b.update(
        tools=[{"type": "function", **_tool(f, b)}] if f == "openai" else [{"type": "function", "function": _tool(f, b)}]
    ),
}


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_wrong_body_fails_the_check(format: Format, mutation: str) -> None:
    body = render("web-agent", WITH_HISTORY, "en", format)
    before = problems(format, body)
    assert before == KNOWN.get((WITH_HISTORY, format), [])
    wrong = copy.deepcopy(body)
    MUTATIONS[mutation](format, wrong)
    assert problems(format, wrong) != before, f"{mutation} passed as {format}"


@pytest.mark.parametrize("format", FORMATS)
def test_an_output_schema_that_is_not_an_object_fails_the_check(format: Format) -> None:
    body = copy.deepcopy(render("goal-agent", "auditor", "en", format))
    path = OUTPUT_SCHEMA[format]
    _at(body, path)[path[-1]] = "{}"
    assert problems(format, body)


def test_a_plain_type_adapter_would_not_do() -> None:
    """Why ``closed``: pydantic checks an SDK TypedDict's iterables lazily
    and lets unknown keys through, so a plain check passes these."""
    wrong = {"model": "m", "messages": [{"role": "bot", "content": "Hi."}], "bogus": 1}
    pydantic.TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(wrong, strict=True)
    assert problems("openai", wrong) != []
