"""The examples of the READMEs (the package's guide and the repository's
"Crates and packages" section) and of the book's pages run, and type-check with ``mypy --strict`` and pyright
(strict, for Python 3.9); the stubs match the extension module
(``mypy.stubtest``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, Server, run_python

READMES = [
    ROOT / "bindings" / "python" / "README.md",
    ROOT / "README.md",
    *sorted((ROOT / "docs" / "src").rglob("*.md")),
]
PYPROJECT = ROOT / "bindings" / "python" / "pyproject.toml"


def examples() -> list[tuple[str, str]]:
    """Every ```python block of the READMEs, named by file and line."""
    found = []
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for match in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{readme.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def mypy_cache() -> str:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return str(target / "mypy-cache")


def test_the_readmes_have_python_examples() -> None:
    names = [name for name, _ in examples()]
    assert any(n.startswith("bindings/python/README.md") for n in names), names
    assert any(n.startswith("README.md") for n in names), names


@pytest.mark.parametrize(("name", "code"), examples(), ids=[name for name, _ in examples()])
def test_a_readme_example_runs(name: str, code: str, server: Server, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    # From the repository's root, where the examples' paths start; with a
    # home of its own and the test's server.
    run_python(script, cwd=ROOT, env={"HOME": str(tmp_path), "PROMPTREG_SERVER": server.url})


def test_the_readme_examples_type_check_strictly(tmp_path: Path) -> None:
    for i, (name, code) in enumerate(examples()):
        (tmp_path / f"example_{i}.py").write_text(f"# {name}\n{code}", encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(PYPROJECT), "--cache-dir", mypy_cache(), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_readme_examples_type_check_with_pyright(tmp_path: Path) -> None:
    examples_dir = tmp_path / "examples"
    examples_dir.mkdir()
    for i, (name, code) in enumerate(examples()):
        (examples_dir / f"example_{i}.py").write_text(f"# {name}\n{code}", encoding="utf-8")
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps({"include": ["examples"], "typeCheckingMode": "strict", "pythonVersion": "3.9"}),
        encoding="utf-8",
    )
    checked = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, "-p", str(config)],
        capture_output=True,
        text=True,
        # pyright keeps nothing in the home directory given here.
        env={**os.environ, "HOME": str(tmp_path), "PYRIGHT_PYTHON_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 errors" in checked.stdout, checked.stdout


def test_the_stubs_match_the_extension_module() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "promptreg._promptreg", "--mypy-config-file", str(PYPROJECT)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPY_CACHE_DIR": mypy_cache()},
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
