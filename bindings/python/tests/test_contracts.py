"""A prompt's contract through the package: the whole request body each
provider takes, with the tools and the output schema of the locale."""

from __future__ import annotations

import pytest

from promptreg import Pack, PromptregError, PromptRegistry

from .conftest import ROOT


def registry(pack: str) -> PromptRegistry:
    prompts = PromptRegistry()
    Pack.load(str(ROOT / "examples" / pack)).install(prompts)
    return prompts


def test_openai_request_carries_tools_and_settings() -> None:
    prompts = registry("web-agent")
    body = prompts.provider_request(
        "webagent-narrator.system", {"brand": "Acme"}, "ja", format="openai"
    )
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == 1200
    assert body["messages"][0]["role"] == "system"
    names = [tool["function"]["name"] for tool in body["tools"]]
    assert names == ["open_page", "search_site", "hand_over"]
    assert body["tools"][0]["function"]["description"] == "サイトのページを開き、その本文を読みます。"


def test_anthropic_and_gemini_shapes_and_the_output_schema() -> None:
    prompts = registry("goal-agent")
    anthropic = prompts.provider_request("auditor", format="anthropic")
    assert anthropic["system"].startswith("You are an independent auditor.")
    assert anthropic["messages"] == []
    assert anthropic["output_config"]["format"]["type"] == "json_schema"
    gemini = prompts.provider_request("auditor", None, "ja", format="gemini")
    schema = gemini["generationConfig"]["responseJsonSchema"]
    assert schema["required"] == ["verdict", "tasks"]
    responses = prompts.provider_request("auditor", format="openai-responses")
    assert responses["text"]["format"]["name"] == "audit_verdict"
    assert responses["text"]["format"]["strict"] is True


def test_an_unknown_format_is_an_error_naming_the_formats() -> None:
    prompts = registry("goal-agent")
    with pytest.raises(PromptregError) as raised:
        prompts.provider_request("auditor", format="claude")  # type: ignore[arg-type]
    assert raised.value.code == "invalid-contract"
    assert "openai, openai-responses, anthropic, gemini" in str(raised.value)
