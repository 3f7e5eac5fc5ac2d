"""The registry from Python: renderers, locales, pinned blocks, appenders,
traces, and what bad input gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import promptreg
from promptreg import PromptRegistry


def test_renderers_take_what_they_declare(registry: PromptRegistry) -> None:
    registry.register_default("both", lambda ctx, locale: f"{ctx['name']} in {locale}")
    registry.register_default("ctx", lambda ctx: f"only {ctx['name']}")
    registry.register_default("none", lambda: "nothing")
    registry.register_default("varargs", lambda *args: f"{len(args)} arguments")
    registry.register_default("text", "  \n\nplain text, trimmed \n")

    class Bound:
        def render(self, ctx: Any, locale: str) -> str:
            return f"method for {locale}"

    registry.register_default("method", Bound().render)
    ctx = {"name": "Ada"}
    assert registry.render("both", ctx, "ja") == "Ada in ja"
    assert registry.render("ctx", ctx) == "only Ada"
    assert registry.render("none") == "nothing"
    assert registry.render("varargs") == "2 arguments"
    assert registry.render("text") == "plain text, trimmed"
    assert registry.render("method", locale="fr-CA") == "method for fr-CA"


def test_locale_chain_fallback_locale_and_pins(registry: PromptRegistry) -> None:
    registry.register("greet", "Hello.", head=["Head."], tail=[lambda: "Tail."], description="A greeting")
    registry.override("greet", "pt", "Olá.")
    registry.override("greet", "zh-Hant", "你好。")
    registry.translate_pin("greet", "pt", "head", 0, "Cabeça.")
    assert registry.render("greet", locale="pt-BR") == "Cabeça.\n\nOlá.\n\nTail."
    assert registry.render("greet", locale="zh-TW") == "Head.\n\n你好。\n\nTail."
    assert registry.render("greet", locale="de") == "Head.\n\nHello.\n\nTail."
    registry.set_fallback_locale("pt")
    assert registry.fallback_locale == "pt"
    assert registry.render("greet", locale="de") == "Cabeça.\n\nOlá.\n\nTail."
    with pytest.raises(ValueError, match="`position` must be \"head\" or \"tail\""):
        registry.translate_pin("greet", "pt", "middle", 0, "x")  # type: ignore[arg-type]


def test_append_all_reaches_later_prompts_and_reset_keeps_it(registry: PromptRegistry) -> None:
    registry.append_all("Be brief.")
    registry.register_default("later", "Later.")
    registry.append("later", "Cite sources.")
    assert registry.render("later") == "Later.\n\nBe brief.\n\nCite sources."
    registry.reset("later")
    assert registry.render("later") == "Later.\n\nBe brief."
    registry.reset()
    assert registry.render("later") == "Later."
    assert "later" in registry and len(registry) == 1
    assert registry.list() == ["later"]
    assert repr(registry) == "PromptRegistry(prompts=1, locale='en')"


def test_the_trace_says_where_each_part_came_from(registry: PromptRegistry) -> None:
    registry.register("id", "Body ✓.", head=["Head."])
    registry.override("id", "ja", "本文。")
    registry.append("id", "Rule.")
    trace = registry.render_traced("id", None, "ja-JP")
    assert trace.text == "Head.\n\n本文。\n\nRule."
    assert [p.origin.kind for p in trace.parts] == ["pinned-head", "override", "appender"]
    for part in trace.parts:
        assert trace.text[part.start : part.end] == part.text
        start, end = part.byte_range
        assert trace.text.encode()[start:end].decode() == part.text
    override = trace.parts[1]
    assert override.origin.locale == "ja"
    assert override.origin.step == "parent"
    assert override.origin.label == "override for `ja`"
    assert [(s.key, s.step) for s in trace.lookup][:2] == [("ja-JP", "exact"), ("ja", "parent")]
    assert trace.trace_attributes["promptreg.prompt.id"] == "id"
    assert registry.explain("id", None, "ja-JP") == trace
    assert "TracePart(origin=PartOrigin(kind='pinned-head'" in repr(trace)


@dataclass
class Shop:
    brand: str
    sitemap: list[str]


def test_templates_read_dicts_dataclasses_and_model_dump(tmp_path: Any) -> None:
    pack = tmp_path / "pack"
    (pack / "defaults").mkdir(parents=True)
    (pack / "promptreg.toml").write_text(
        'name = "shop"\nkeys = ["shop"]\n[user]\nprompts_dir = ".shop/prompts/"\n', encoding="utf-8"
    )
    (pack / "defaults" / "shop.md").write_text(
        "---\ntemplate: true\n---\n{{ brand }}: {{ sitemap | join(', ') }}\n", encoding="utf-8"
    )
    registry = PromptRegistry()
    promptreg.Pack.load(pack).install(registry)
    expected = "Acme: /tents, /packs"
    assert registry.render("shop", {"brand": "Acme", "sitemap": ["/tents", "/packs"]}) == expected
    assert registry.render("shop", Shop("Acme", ["/tents", "/packs"])) == expected

    class Model:
        def model_dump(self, mode: str) -> dict[str, Any]:
            assert mode == "json"
            return {"brand": "Acme", "sitemap": ("/tents", "/packs")}

    assert registry.render("shop", Model()) == expected
    with pytest.raises(promptreg.RenderError) as raised:
        registry.render("shop", {"sitemap": []})
    assert raised.value.id == "shop"
    assert "brand" in str(raised.value)
    with pytest.raises(promptreg.RenderError, match="not data a template can read"):
        registry.render("shop", object())
    # What is not data is named where it is.
    with pytest.raises(promptreg.RenderError, match=r'ctx\["sitemap"\]\[1\] is of type `object`'):
        registry.render("shop", {"brand": "Acme", "sitemap": ["/tents", object()]})
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(promptreg.RenderError, match="nests deeper than 128 levels"):
        registry.render("shop", {"brand": cycle, "sitemap": []})
    with pytest.raises(promptreg.RenderError, match="integer beyond 64 bits"):
        registry.render("shop", {"brand": 2**70, "sitemap": []})
    # Keys that are not str are made str; tuples are lists.
    assert registry.render("shop", {"brand": "Acme", "sitemap": ("/a", 1, 2.5, True, None), 3: "x"}) == (
        "Acme: /a, 1, 2.5, True, None"
    )


def test_a_renderer_that_raises_is_a_render_error_chaining_it(registry: PromptRegistry) -> None:
    def broken(ctx: Any, locale: str) -> str:
        raise KeyError("brand")

    registry.register_default("broken", broken)
    with pytest.raises(promptreg.RenderError) as raised:
        registry.render("broken")
    error = raised.value
    assert isinstance(error, promptreg.PromptregError)
    assert error.code == "renderer-panicked"
    assert error.id == "broken"
    assert str(error) == "the default of prompt `broken` failed while rendering for `en`: it raised KeyError: 'brand'"
    assert isinstance(error.__cause__, KeyError)

    registry.register_default("number", lambda: 42)  # type: ignore[arg-type]
    with pytest.raises(promptreg.RenderError, match="a renderer must return a str, not int") as raised:
        registry.render("number")
    assert isinstance(raised.value.__cause__, TypeError)


def test_an_interrupt_in_a_renderer_goes_through(registry: PromptRegistry) -> None:
    def interrupted() -> str:
        raise KeyboardInterrupt

    registry.register_default("interrupted", interrupted)
    with pytest.raises(KeyboardInterrupt):
        registry.render("interrupted")
    # The registry is still usable.
    registry.register_default("fine", "Fine.")
    assert registry.render("fine") == "Fine."


def test_a_renderer_may_render_another_prompt(registry: PromptRegistry) -> None:
    registry.register_default("inner", lambda ctx: f"inner {ctx}")
    registry.register_default("outer", lambda ctx, locale: "outer > " + registry.render("inner", ctx, locale))
    assert registry.render("outer", 7) == "outer > inner 7"


def test_library_errors_are_typed_with_their_data(registry: PromptRegistry) -> None:
    registry.register_default("translate.system", "Translate.")
    with pytest.raises(promptreg.UnknownPromptError) as raised:
        registry.render("translate.sytem")
    assert raised.value.code == "unknown-id"
    assert raised.value.id == "translate.sytem"
    assert raised.value.suggestion is not None and "translate.system" in raised.value.suggestion
    assert raised.value.diagnostics == []

    with pytest.raises(promptreg.PromptregError) as invalid:
        registry.register_default("Bad Id", "x")
    assert invalid.value.code == "invalid-id"
    with pytest.raises(promptreg.PromptregError) as locale:
        registry.set_locale("not a locale!")
    assert locale.value.code == "invalid-locale"
    assert registry.locale == "en"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.register_default("a", 7), "`render` must be a str or a callable"),
        (lambda r: r.register_default(7, "x"), "'int' object"),
        (lambda r: r.append("a", None), "`extra` must be a str or a callable"),
        (lambda r: r.register("a", "x", head="oops"), "`head` must be a list of str or callables"),
        (lambda r: r.register("a", "x", tail=[1]), r"`tail\[0\]` must be a str or a callable"),
        (lambda r: r.register_chat("a", [{"role": "user"}]), r"`messages\[0\]\[\"content\"\]` must be a str"),
        (lambda r: r.register_chat("a", [{"role": "user", "content": "x", "history": "h"}]), "not both"),
        (lambda r: r.register_chat("a", "system"), "`messages` must be a list"),
        (lambda r: r.render_messages("a", history=[{"role": "user", "content": "x"}]), "`history` must be a mapping"),
        (lambda r: r.render_messages("a", history={"h": [{"role": 1, "content": "x"}]}), r"`history\[\"h\"\]\[0\]\[\"role\"\]` must be a str"),
        (lambda r: r.watch("not callable"), "`callback` must be a callable"),
        (lambda r: r.follow("http://127.0.0.1:1", pack="p", on_change=3), "`on_change` must be a callable"),
    ],
)
def test_arguments_of_the_wrong_type_are_type_errors_naming_them(call: Any, message: str) -> None:
    registry = PromptRegistry()
    registry.register_default("a", "A.")
    with pytest.raises(TypeError, match=message):
        call(registry)
    # Nothing changed.
    assert registry.render("a") == "A."


def test_durations_must_be_positive_seconds(registry: PromptRegistry) -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="`poll_interval` must be a number of seconds above 0"):
            registry.follow("http://127.0.0.1:1", pack="p", poll_interval=bad, disk_cache=False)
    with pytest.raises(promptreg.RemoteError):
        registry.follow("http://127.0.0.1:1", pack="", disk_cache=False)


def test_the_process_wide_registry_is_one() -> None:
    from promptreg import prompt_registry

    assert promptreg.prompt_registry is prompt_registry
    prompt_registry.register_default("test.shared", "Shared.")
    try:
        import promptreg as again

        assert again.prompt_registry.render("test.shared") == "Shared."
    finally:
        prompt_registry.reset("test.shared")


def test_a_part_from_a_stale_translation_says_so(tmp_path: Any) -> None:
    (tmp_path / "defaults").mkdir()
    (tmp_path / "promptreg.toml").write_text(
        'name = "t"\nkeys = ["greeting"]\n[user]\nprompts_dir = ".t"\n'
    )
    (tmp_path / "defaults" / "greeting.md").write_text("Hello, world!\n")
    (tmp_path / "defaults" / "greeting.ja.md").write_text(
        '---\ntranslated_from:\n  digest: "0000000000000000"\n  body: Hello!\n---\nこんにちは！\n',
        encoding="utf-8",
    )
    registry = PromptRegistry()
    promptreg.Pack.load(tmp_path).install(registry)
    [ja] = registry.render_traced("greeting", None, "ja").parts
    assert ja.provenance is not None and ja.provenance.stale
    [en] = registry.render_traced("greeting").parts
    assert en.provenance is not None and not en.provenance.stale


def test_every_render_takes_a_subject_and_no_split_gives_every_subject_the_registry(
    registry: PromptRegistry,
) -> None:
    registry.register_default("translate.system", "Translate.")
    registry.override("translate.system", "fr", "Traduisez.")
    registry.register_chat("helper", [{"role": "system", "content": "Help."}, {"history": "turns"}])
    turns: dict[str, list[promptreg.Message]] = {"turns": [{"role": "user", "content": "Hi"}]}
    assert registry.render("translate.system", None, "fr-CA", subject="user-7") == "Traduisez."
    assert registry.render_traced("translate.system", subject="user-7").text == "Translate."
    assert registry.explain("translate.system", locale="fr", subject="user-7").parts[0].origin.kind == "override"
    assert registry.render_messages("helper", history=turns, subject="user-7") == [
        {"role": "system", "content": "Help."},
        {"role": "user", "content": "Hi"},
    ]
    assert len(registry.render_messages_traced("helper", None, "ja", turns, subject="user-7").messages) == 2
    assert registry.render_chat("helper", history=turns, subject="user-7").messages[1]["content"] == "Hi"
    assert registry.render_chat_as_text("helper", history=turns, subject="user-7").startswith("# system")
    with pytest.raises(TypeError):
        registry.render("translate.system", subject=7)  # type: ignore[arg-type]
