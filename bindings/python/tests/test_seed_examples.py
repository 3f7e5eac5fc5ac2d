"""The web-agent SDK's documented examples (prompt-registry, "常見模式"),
in Python: ``dddk.prompts`` is a registry and ``dddk.set_locale`` its
``set_locale``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import promptreg


@dataclass
class AssemblePromptInput:
    brand: str
    persona: str


@dataclass
class Dddk:
    prompts: promptreg.PromptRegistry
    set_locale: Callable[[str], None]


def auto_install() -> Dddk:
    """What ``autoInstall()`` gives: the subsystems' defaults registered."""
    prompts = promptreg.PromptRegistry()
    prompts.register_default("inline-edit.system", "You are an inline editing assistant.")
    prompts.register_default("translate.system", "Translate the page faithfully.")
    prompts.register_default("planner.system", "Write an execution plan for the WebAgent.")
    prompts.register_default(
        "webagent-narrator.system",
        lambda ctx, locale: f"You are {ctx.persona}, the guide of {ctx.brand}.",
    )
    return Dddk(prompts=prompts, set_locale=prompts.set_locale)


CTX = AssemblePromptInput(brand="Acme", persona="Ada")


def test_multi_locale_launch() -> None:
    """ja, es and fr overrides; en and zh-TW keep the SDK default."""
    dddk = auto_install()
    dddk.prompts.override("webagent-narrator.system", "ja", lambda c, _: f"あなたは{c.brand}の案内役{c.persona}です。")
    dddk.prompts.override("webagent-narrator.system", "es", lambda c, _: f"Eres {c.persona}, guía de {c.brand}.")
    dddk.prompts.override("webagent-narrator.system", "fr", lambda c, _: f"Vous êtes {c.persona}, guide de {c.brand}.")

    def render(locale: str) -> str:
        return dddk.prompts.render("webagent-narrator.system", CTX, locale)

    assert render("ja") == "あなたはAcmeの案内役Adaです。"
    assert render("es") == "Eres Ada, guía de Acme."
    assert render("es-MX") == "Eres Ada, guía de Acme."
    assert render("fr") == "Vous êtes Ada, guide de Acme."
    assert render("en") == "You are Ada, the guide of Acme."
    assert render("zh-TW") == "You are Ada, the guide of Acme."


RULE = "合規需求：\n- 絕不揭露使用者個資。\n- 拒絕撰寫法律或醫療意見。\n- 被問到價格時，回：「請聯絡 sales@acme.com。」"


def test_compliance_layer_over_list() -> None:
    """One appender on every prompt from list(), base prompts untouched."""
    dddk = auto_install()

    def compliance() -> str:
        return """
合規需求：
- 絕不揭露使用者個資。
- 拒絕撰寫法律或醫療意見。
- 被問到價格時，回：「請聯絡 sales@acme.com。」
"""

    for id in dddk.prompts.list():
        dddk.prompts.append(id, compliance)

    assert dddk.prompts.render("translate.system") == f"Translate the page faithfully.\n\n{RULE}"
    assert dddk.prompts.render("webagent-narrator.system", CTX, "ja") == f"You are Ada, the guide of Acme.\n\n{RULE}"
    for id in dddk.prompts.list():
        assert dddk.prompts.render(id, CTX).endswith(RULE), id


def test_switching_the_locale_at_runtime() -> None:
    """The next render uses the new locale, nothing re-registered."""
    dddk = auto_install()
    dddk.prompts.override("inline-edit.system", "ja", lambda: "あなたはインライン編集アシスタントです。")
    listeners: list[Callable[[str], None]] = [dddk.set_locale]

    def picker_changed(locale: str) -> None:
        for listener in listeners:
            listener(locale)

    assert dddk.prompts.render("inline-edit.system") == "You are an inline editing assistant."
    picker_changed("ja")
    assert dddk.prompts.locale == "ja"
    assert dddk.prompts.render("inline-edit.system") == "あなたはインライン編集アシスタントです。"
    picker_changed("en")
    assert dddk.prompts.render("inline-edit.system") == "You are an inline editing assistant."


def test_reset_goes_back_to_the_sdk_default() -> None:
    """Overrides and appenders cleared, default kept."""
    dddk = auto_install()
    dddk.prompts.override("inline-edit.system", "ja", lambda: "日本語。")
    dddk.prompts.append("inline-edit.system", lambda: "Never change the tone.")

    dddk.prompts.reset("inline-edit.system")
    assert dddk.prompts.render("inline-edit.system", None, "ja") == "You are an inline editing assistant."
    assert dddk.prompts.has("inline-edit.system")
