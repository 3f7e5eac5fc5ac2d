"""``resolve_prompt(key, cfg, cwd, default, home=..., prompts_dir=...)``: the
coding-agent extension's rules (its prompt-configuration document: modes,
file paths, precedence), one test per rule."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

import promptreg
from promptreg import PromptConfig, ResolvedPrompt, resolve_prompt

PROMPTS_DIR = ".pi/pi-goal-xx/prompts/"
DEFAULT = "You are working on an active goal."
NOTHING = (DEFAULT, None, "none")
MODES = ["override", "append", "global-local", "local", "global-local-merge", "off"]


@dataclass
class Setup:
    home: Path
    cwd: Path
    key: str

    def resolve(
        self,
        cfg: Optional[PromptConfig],
        *,
        key: Optional[str] = None,
        cwd: Optional[str] = None,
        prompts_dir: str = PROMPTS_DIR,
    ) -> ResolvedPrompt:
        return resolve_prompt(
            key or self.key,
            cfg,
            str(self.cwd) if cwd is None else cwd,
            DEFAULT,
            home=str(self.home),
            prompts_dir=prompts_dir,
        )


def setup(root: Path, glob: Optional[str] = None, local: Optional[str] = None, key: str = "goal-running") -> Setup:
    home, cwd = root / "home", root / "project"
    for folder, text in ((home, glob), (cwd, local)):
        (folder / PROMPTS_DIR).mkdir(parents=True)
        if text is not None:
            (folder / PROMPTS_DIR / f"{key}.md").write_text(text, encoding="utf-8")
    return Setup(home=home, cwd=cwd, key=key)


def triple(result: ResolvedPrompt) -> tuple[str, Optional[str], str]:
    return (result.final, result.injected, result.source)


def test_nothing_configured_is_the_default_alone(tmp_path: Path) -> None:
    s = setup(tmp_path)
    assert triple(s.resolve(None)) == NOTHING
    assert triple(s.resolve({})) == NOTHING
    assert repr(s.resolve(None)) == f"ResolvedPrompt(final={DEFAULT!r}, injected=None, source='none')"


@pytest.mark.parametrize("mode", MODES)
def test_inline_wins_in_every_mode_and_replaces_the_default(tmp_path: Path, mode: Any) -> None:
    s = setup(tmp_path, glob="Global.", local="Local.")
    inline = "Delegate implementation to a team."
    assert triple(s.resolve({"mode": mode, "inline": inline})) == (inline, inline, "inline")


def test_blank_inline_is_absent_and_inline_is_trimmed(tmp_path: Path) -> None:
    s = setup(tmp_path, local="Local.")
    assert s.resolve({"inline": "  \n "}).source == "local"
    assert s.resolve({"inline": "\n  Be brief.  \n"}).injected == "Be brief."


def test_global_local_prefers_the_local_file_after_the_default(tmp_path: Path) -> None:
    s = setup(tmp_path, glob="Global.", local="Local.")
    for cfg in (None, {}, {"mode": "global-local"}):
        assert triple(s.resolve(cfg)) == (f"{DEFAULT}\n\nLocal.", "Local.", "local")  # type: ignore[arg-type]
    g = setup(tmp_path / "g", glob="Global.")
    assert triple(g.resolve({"mode": "global-local"})) == (f"{DEFAULT}\n\nGlobal.", "Global.", "global")


def test_append_and_override(tmp_path: Path) -> None:
    s = setup(tmp_path, glob="Global.", local="Local.")
    assert s.resolve({"mode": "append"}).final == f"{DEFAULT}\n\nLocal."
    assert triple(s.resolve({"mode": "override"})) == ("Local.", "Local.", "local")
    assert triple(setup(tmp_path / "none").resolve({"mode": "override"})) == NOTHING


def test_local_never_reads_the_global_file(tmp_path: Path) -> None:
    assert setup(tmp_path, glob="G.", local="L.").resolve({"mode": "local"}).final == f"{DEFAULT}\n\nL."
    assert triple(setup(tmp_path / "g", glob="G.").resolve({"mode": "local"})) == NOTHING


def test_global_local_merge(tmp_path: Path) -> None:
    both = setup(tmp_path, glob="Global.", local="Local.")
    assert triple(both.resolve({"mode": "global-local-merge"})) == (
        f"{DEFAULT}\n\nGlobal.\n\nLocal.",
        "Global.\n\nLocal.",
        "merged",
    )
    assert setup(tmp_path / "g", glob="G.").resolve({"mode": "global-local-merge"}).source == "global"
    assert setup(tmp_path / "l", local="L.").resolve({"mode": "global-local-merge"}).source == "local"


def test_off_injects_nothing_even_with_files(tmp_path: Path) -> None:
    assert triple(setup(tmp_path, glob="G.", local="L.").resolve({"mode": "off"})) == NOTHING


def test_files_are_trimmed_and_a_blank_file_is_absent(tmp_path: Path) -> None:
    s = setup(tmp_path, glob="\n\nGlobal.\n\n", local=" \n\t\n")
    assert triple(s.resolve({})) == (f"{DEFAULT}\n\nGlobal.", "Global.", "global")


def test_tool_prompts_and_prompts_dir(tmp_path: Path) -> None:
    tool = setup(tmp_path, key="tool-create-goal", local="Always name the goal.")
    assert tool.resolve({"mode": "append"}).final == f"{DEFAULT}\n\nAlways name the goal."
    s = setup(tmp_path / "custom")
    (s.cwd / "custom").mkdir()
    (s.cwd / "custom/auditor.md").write_text("Custom local.", encoding="utf-8")
    (s.home / "custom").mkdir()
    (s.home / "custom/auditor.md").write_text("Custom global.", encoding="utf-8")
    assert s.resolve({}, key="auditor", prompts_dir="custom").injected == "Custom local."
    assert s.resolve({"mode": "override"}, key="auditor", prompts_dir="custom", cwd="").final == "Custom global."


def test_the_file_setting_is_relative_to_cwd_and_a_missing_one_falls_through(tmp_path: Path) -> None:
    s = setup(tmp_path, glob="Global.")
    (s.cwd / "rules.md").write_text("From the named file.", encoding="utf-8")
    assert triple(s.resolve({"file": "rules.md"})) == (
        f"{DEFAULT}\n\nFrom the named file.",
        "From the named file.",
        "local",
    )
    assert s.resolve({"file": "missing.md"}).source == "global"


def test_texts_pass_through_unchanged(tmp_path: Path) -> None:
    text = "Réponds en français — 日本語も OK 😀"
    assert setup(tmp_path, local=text).resolve({"mode": "override"}).final == text


def test_bad_input(tmp_path: Path) -> None:
    s = setup(tmp_path)
    with pytest.raises(promptreg.ConfigError, match="invalid mode `apend`; valid modes are `override`, `append`"):
        s.resolve({"mode": "apend"})  # type: ignore[arg-type]
    with pytest.raises(promptreg.PromptregError) as raised:
        s.resolve({}, key="../secrets")
    assert raised.value.code == "invalid-id"
    with pytest.raises(TypeError, match="`cfg` must be a dict"):
        resolve_prompt("auditor", "append", "", DEFAULT, home=str(s.home), prompts_dir=PROMPTS_DIR)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`cfg\[\"mode\"\]` must be a str, not int"):
        resolve_prompt("auditor", {"mode": 3}, "", DEFAULT, home=str(s.home), prompts_dir=PROMPTS_DIR)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        resolve_prompt("auditor", {}, "", DEFAULT, home=str(s.home))  # type: ignore[call-arg]
