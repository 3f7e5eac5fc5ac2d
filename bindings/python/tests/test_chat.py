"""Chat prompts: declared in code and in the web-agent example pack,
rendered as OpenAI's chat format and checked against the ``openai`` and
``anthropic`` packages' own request types and clients (over a mock
transport: nothing leaves the process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pydantic
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

import promptreg
from promptreg import Message, PromptRegistry

from .conftest import EXAMPLES, context

NARRATOR = "webagent-narrator.system"
HISTORY: dict[str, list[Message]] = {"conversation": [{"role": "user", "content": "And backpacks?"}]}


@pytest.fixture
def web_agent() -> PromptRegistry:
    registry = PromptRegistry()
    promptreg.Pack.load(EXAMPLES / "web-agent").install(registry)
    return registry


@pytest.fixture(autouse=True)
def no_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs read configuration from the home directory and the
    environment: neither is the real one here."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_chat_declared_in_code(registry: PromptRegistry) -> None:
    registry.register_chat(
        "narrator",
        [
            {"role": "system", "content": lambda ctx: f"You narrate {ctx['brand']}'s pages."},
            {"role": "user", "content": "Find the tents."},
            {"role": "assistant", "content": "Opening /tents."},
            {"history": "conversation"},
        ],
        tail=["Never invent prices."],
        model={"model": "gpt-4o-mini", "temperature": 0.3},
        description="The narrator",
    )
    registry.append("narrator", "Answer in one sentence.")
    registry.override_chat("narrator", "ja", [{"role": "system", "content": "ページを案内します。"}])
    messages = registry.render_messages("narrator", {"brand": "Acme"}, history=HISTORY)
    assert messages == [
        {"role": "system", "content": "You narrate Acme's pages.\n\nNever invent prices.\n\nAnswer in one sentence."},
        {"role": "user", "content": "Find the tents."},
        {"role": "assistant", "content": "Opening /tents."},
        {"role": "user", "content": "And backpacks?"},
    ]
    assert registry.render_messages("narrator", {}, "ja-JP")[0]["content"].startswith("ページを案内します。")
    assert registry.is_chat("narrator")
    assert registry.model_settings("narrator") == {"model": "gpt-4o-mini", "temperature": 0.3}
    assert registry.render_chat_as_text("narrator", {"brand": "Acme"}).startswith("# system\nYou narrate")
    with pytest.raises(promptreg.PromptregError) as raised:
        registry.render("narrator", {"brand": "Acme"})
    assert raised.value.code == "chat-prompt"
    assert "render_messages" in str(raised.value)


def test_the_example_pack_renders_in_openai_shape(web_agent: PromptRegistry) -> None:
    ctx = context("web-agent")
    history = json.loads((EXAMPLES / "web-agent" / "history.json").read_text(encoding="utf-8"))
    request = web_agent.render_chat(NARRATOR, ctx, history=history)
    assert request.id == NARRATOR
    assert request.model == {"model": "gpt-4o-mini", "temperature": 0.3, "max_tokens": 800}
    assert request.metadata == {"owner": "web-agent"}
    assert request.messages == web_agent.render_messages(NARRATOR, ctx, history=history)
    assert request.messages[-1] == history["conversation"][-1]
    assert request.messages[0]["content"].startswith("You are the friendly assistant of Acme Outdoor")
    # The locale's own model settings: Japanese answers run longer.
    assert web_agent.render_chat(NARRATOR, ctx, "ja").model["max_tokens"] == 1200

    kwargs = request.openai()
    assert kwargs == {
        "model": "gpt-4o-mini",
        "messages": request.messages,
        "extra_body": {"temperature": 0.3, "max_tokens": 800},
    }
    # openai's own request types accept the messages as they are.
    pydantic.TypeAdapter(list[ChatCompletionMessageParam]).validate_python(kwargs["messages"], strict=True)

    trace = web_agent.render_messages_traced(NARRATOR, ctx, history=history)
    assert [m.content for m in trace.messages] == [m["content"] for m in request.messages]
    assert trace.messages[-1].source.kind == "history"
    assert trace.messages[-1].source.name == "conversation"
    assert trace.messages[0].parts[0].provenance is not None
    assert trace.messages[0].parts[0].provenance.source == "pack"
    assert trace.model == request.model


def test_the_openai_client_sends_the_request_as_rendered(web_agent: PromptRegistry) -> None:
    from openai import OpenAI

    sent: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-4o-mini",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sure."}}],
            },
        )

    client = OpenAI(
        api_key="test",
        base_url="http://127.0.0.1:9/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
        max_retries=0,
    )
    request = web_agent.render_chat(NARRATOR, context("web-agent"), history=HISTORY)
    completion = client.chat.completions.create(**request.openai())
    assert completion.choices[0].message.content == "Sure."
    assert sent == [{**request.model, "messages": request.messages}]


def test_the_anthropic_shape_puts_the_system_text_apart(web_agent: PromptRegistry) -> None:
    from anthropic import Anthropic

    request = web_agent.render_chat(NARRATOR, context("web-agent"), history=HISTORY)
    kwargs = request.anthropic()
    assert kwargs["model"] == "gpt-4o-mini" and kwargs["max_tokens"] == 800
    assert kwargs["extra_body"] == {"temperature": 0.3}
    assert kwargs["system"] == request.messages[0]["content"]
    assert kwargs["messages"] == request.messages[1:]
    assert all(m["role"] in ("user", "assistant") for m in kwargs["messages"])
    pydantic.TypeAdapter(list[MessageParam]).validate_python(kwargs["messages"], strict=True)

    sent: list[dict[str, Any]] = []

    def answer(http: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(http.content))
        return httpx2.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "gpt-4o-mini",
                "content": [{"type": "text", "text": "Sure."}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    client = Anthropic(
        api_key="test",
        base_url="http://127.0.0.1:9",
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
        max_retries=0,
    )
    reply = client.messages.create(**kwargs)
    assert reply.content[0].type == "text"
    assert sent == [{**request.model, "system": kwargs["system"], "messages": kwargs["messages"]}]


def test_the_anthropic_shape_refuses_what_anthropic_cannot_take(registry: PromptRegistry) -> None:
    registry.register_chat(
        "late-system",
        [{"role": "user", "content": "Hi."}, {"role": "system", "content": "Be brief."}],
    )
    request = registry.render_chat("late-system")
    assert request.openai() == {"messages": request.messages}
    assert "system" not in registry.render_chat("late-system").model
    with pytest.raises(promptreg.PromptregError) as raised:
        request.anthropic()
    assert raised.value.code == "invalid-chat"
    assert raised.value.id == "late-system"
    assert "message 1" in str(raised.value) and "`system`" in str(raised.value)
    # A text prompt renders as one system message.
    registry.register_default("text", "Plain.")
    assert registry.render_chat("text").anthropic() == {"system": "Plain.", "messages": []}
