"""Packs and the user's configuration: load, install, load_config, reload,
check with diagnostics as objects, and watch. Every test has its own home
and project folders; none touches the real home."""

from __future__ import annotations

import queue
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import promptreg
from promptreg import ConfigSpec, Pack, PromptRegistry, ReloadEvent

from .conftest import EXAMPLES, context

GOAL_AGENT = EXAMPLES / "goal-agent"


@dataclass
class Sandbox:
    home: Path
    project: Path

    def write(self, file: Path, text: str) -> None:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    return Sandbox(home=tmp_path / "home", project=tmp_path / "project")


APP_SPEC = dict(
    keys=["auditor"],
    key_patterns=["tool-*"],
    prompts_dir=".app/prompts",
    settings_file=".app/settings.json",
    legacy_aliases={"auditorPrompt": "prompts.auditor.inline"},
)


def app_spec() -> ConfigSpec:
    return ConfigSpec("app", **APP_SPEC)  # type: ignore[arg-type]


def app_registry() -> PromptRegistry:
    registry = PromptRegistry()
    registry.register("auditor", "Audit the work.", tail=["Answer PASS or FAIL."])
    return registry


def test_a_pack_loads_installs_and_renders_its_templates() -> None:
    pack = Pack.load(GOAL_AGENT)
    assert pack.name == "goal-agent"
    assert "goal-running" in pack.ids
    assert [d for d in Pack.check(str(GOAL_AGENT)) if d.severity == "error"] == []
    assert repr(pack) == f"Pack('goal-agent', prompts={len(pack.ids)})"

    registry = PromptRegistry()
    pack.install(registry)
    assert registry.list() == sorted(pack.ids)
    text = registry.render("goal-running", context("goal-agent"))
    assert text.startswith("[PI GOAL ACTIVE goalId=g-42]\nObjective: Add CSV export to the reports page"), text
    assert text.endswith("Report the command you ran and its result."), text
    with pytest.raises(promptreg.RenderError) as raised:
        registry.render("goal-running", {})
    assert raised.value.code == "template"
    assert "goal-running" in str(raised.value)
    with pytest.raises(TypeError):
        pack.install({})  # type: ignore[arg-type]


def test_a_folder_that_is_no_pack_is_a_config_error_with_its_diagnostics(sandbox: Sandbox) -> None:
    with pytest.raises(promptreg.ConfigError) as raised:
        Pack.load(sandbox.home)
    assert raised.value.code == "config"
    assert raised.value.diagnostics
    file = raised.value.diagnostics[0].file
    assert file is not None and file.endswith("promptreg.toml")


def test_user_files_and_settings_apply_after_load_config(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.project / ".app/prompts/auditor.md", "Reject work without tests.\n")
    sandbox.write(
        sandbox.project / ".app/settings.json",
        '{\n  // JSON with comments.\n  "prompts": { "auditor": { "mode": "override" } },\n}\n',
    )
    registry = app_registry()
    report = registry.load_config(app_spec(), home=str(sandbox.home), cwd=str(sandbox.project))
    assert report.changed == ["auditor"] and report.warnings == []
    assert registry.render("auditor") == "Reject work without tests.\n\nAnswer PASS or FAIL."

    user = registry.render_traced("auditor").parts[0]
    assert user.origin.kind == "user"
    assert user.origin.replaces_body is True
    assert user.provenance is not None
    assert user.provenance.source == "user"
    assert user.provenance.mode == "override"
    assert user.provenance.file == str(sandbox.project / ".app/prompts/auditor.md")
    assert user.provenance.chosen_by is not None
    assert (user.provenance.chosen_by.key_path, user.provenance.chosen_by.line) == ("prompts.auditor", 3)

    registry.unload_config()
    assert registry.render("auditor") == "Audit the work.\n\nAnswer PASS or FAIL."


def test_a_pack_declares_the_configuration_its_users_may_write(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.project / ".pi/pi-goal-xx/prompts/goal-running.md", "Delegate implementation to a team.")
    sandbox.write(
        sandbox.project / ".pi/pi-goal-xx-settings.json",
        '{ "prompts": { "goal-running": { "mode": "override" } } }',
    )
    pack = Pack.load(GOAL_AGENT)
    spec = pack.config_spec()
    assert spec.prompts_dir == ".pi/pi-goal-xx/prompts/"
    assert spec.key_patterns == ["tool-*"]
    assert spec.settings_env == "PI_GOAL_SETTINGS_FILE"

    registry = PromptRegistry()
    pack.install(registry)
    registry.load_config(spec, home=str(sandbox.home), cwd=str(sandbox.project))
    text = registry.render("goal-running", context("goal-agent"))
    assert "\n\nDelegate implementation to a team.\n\nVerification contract:" in text, text
    assert "You are working on an active goal." not in text


def test_reload_keeps_the_last_good_state_and_raises_located_diagnostics(sandbox: Sandbox) -> None:
    prompt = sandbox.project / ".app/prompts/auditor.md"
    settings = sandbox.project / ".app/settings.json"
    sandbox.write(prompt, "First rule.")
    registry = app_registry()
    registry.load_config(app_spec(), home=str(sandbox.home), cwd=str(sandbox.project))
    assert registry.render("auditor") == "Audit the work.\n\nFirst rule.\n\nAnswer PASS or FAIL."

    sandbox.write(prompt, "Second rule.")
    assert registry.reload().changed == ["auditor"]
    second = "Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL."
    assert registry.render("auditor") == second

    sandbox.write(settings, '{\n  "prompts": {\n    "auditor": { "mode": "apend" }\n  }\n}\n')
    sandbox.write(prompt, "Third rule.")
    with pytest.raises(promptreg.ConfigError) as raised:
        registry.reload()
    [d] = raised.value.diagnostics
    assert (d.severity, d.code, d.file, d.line, d.column, d.key_path, d.suggestion) == (
        "error",
        "invalid-mode",
        str(settings),
        3,
        26,
        "prompts.auditor.mode",
        "did you mean `append`?",
    )
    assert "invalid mode `apend`" in d.message
    assert str(d).startswith(f"{settings}:3:26: error: ")
    assert registry.render("auditor") == second

    with pytest.raises(promptreg.PromptregError) as not_loaded:
        PromptRegistry().reload()
    assert not_loaded.value.code == "not-loaded"


def test_check_reports_every_problem_without_loading(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.project / ".app/prompts/auditr.md", "Typo in the name.")
    sandbox.write(
        sandbox.project / ".app/settings.json",
        '{ "prompts": { "auditor": { "mode": "override", "inline": "x" } } }',
    )
    diagnostics = promptreg.check(app_spec(), home=str(sandbox.home), cwd=str(sandbox.project))
    assert [(d.severity, d.code) for d in diagnostics] == [("warning", "unknown-prompt-file")]
    assert diagnostics[0].suggestion == "did you mean `auditor.md`?"
    assert diagnostics[0].file == str(sandbox.project / ".app/prompts/auditr.md")

    in_buffer = promptreg.check_settings(app_spec(), "settings.json", '{ "prompts": { "auditr": {} } }')
    assert in_buffer[0].code == "unknown-prompt-key"
    assert (in_buffer[0].key_path, in_buffer[0].line, in_buffer[0].column) == ("prompts.auditr", 1, 16)
    assert in_buffer[0].suggestion == "did you mean `auditor`?"


def test_a_spec_is_checked_when_made(sandbox: Sandbox) -> None:
    with pytest.raises(promptreg.ConfigError):
        ConfigSpec("app", keys=["auditor"])  # no prompts folder
    with pytest.raises(promptreg.ConfigError):
        ConfigSpec("app", keys=["Not A Key"], prompts_dir=".app/prompts")
    with pytest.raises(TypeError):
        ConfigSpec("app", keys="auditor", prompts_dir=".app/prompts")
    with pytest.raises(TypeError):
        app_registry().load_config("app", home=str(sandbox.home))  # type: ignore[arg-type]


def test_watch_reloads_on_a_change_and_reports_failures(sandbox: Sandbox) -> None:
    prompt = sandbox.project / ".app/prompts/auditor.md"
    settings = sandbox.project / ".app/settings.json"
    sandbox.write(prompt, "First rule.")
    sandbox.write(settings, "{}")
    registry = app_registry()
    registry.load_config(app_spec(), home=str(sandbox.home), cwd=str(sandbox.project))

    events: queue.Queue[ReloadEvent] = queue.Queue()
    with registry.watch(events.put, debounce=0.02) as watcher:
        assert watcher.is_open
        sandbox.write(prompt, "Second rule.")
        reloaded = events.get(timeout=60)
        assert reloaded.kind == "reloaded"
        assert reloaded.report is not None and reloaded.report.changed == ["auditor"]
        second = "Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL."
        assert registry.render("auditor") == second

        sandbox.write(settings, '{ "prompts": { "auditor": { "mode": 1 } } }')
        failed = events.get(timeout=60)
        assert failed.kind == "failed" and failed.code == "config"
        assert failed.diagnostics[0].key_path == "prompts.auditor.mode"
        assert registry.render("auditor") == second
    assert not watcher.is_open
    watcher.close()

    with pytest.raises(promptreg.PromptregError) as raised:
        PromptRegistry().watch(lambda event: None)
    assert raised.value.code == "not-loaded"


def test_a_watch_callback_that_raises_is_reported_and_the_watch_goes_on(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = sandbox.project / ".app/prompts/auditor.md"
    sandbox.write(prompt, "First rule.")
    registry = app_registry()
    registry.load_config(app_spec(), home=str(sandbox.home), cwd=str(sandbox.project))
    # Python reports an exception no caller can catch through this hook.
    unraisable: queue.Queue[Any] = queue.Queue()
    monkeypatch.setattr(sys, "unraisablehook", unraisable.put)
    events: queue.Queue[ReloadEvent] = queue.Queue()

    def callback(event: ReloadEvent) -> None:
        events.put(event)
        if events.qsize() == 1:
            raise RuntimeError("the callback is broken")

    with registry.watch(callback, debounce=0.02):
        sandbox.write(prompt, "Second rule.")
        reported = unraisable.get(timeout=60)
        assert isinstance(reported.exc_value, RuntimeError)
        assert reported.object is callback
        assert events.get(timeout=60).kind == "reloaded"
        sandbox.write(prompt, "Third rule.")
        assert events.get(timeout=60).kind == "reloaded"
    assert "Third rule." in registry.render("auditor")
