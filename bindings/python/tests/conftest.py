"""Fixtures the tests share: the repository's example packs, a fresh
registry, and a real ``promptreg serve`` on loopback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import pytest

import promptreg

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
# Generous: the point is that it happens, not how fast.
DEADLINE = 60.0

T = TypeVar("T")


@pytest.fixture
def registry() -> promptreg.PromptRegistry:
    return promptreg.PromptRegistry()


def context(pack: str) -> Any:
    """The example context a pack's templates render with."""
    return json.loads((EXAMPLES / pack / "context.json").read_text(encoding="utf-8"))


def promptreg_bin() -> Path:
    """The ``promptreg`` tool: ``PROMPTREG_BIN``, else the debug build.

    Without it, the tests that need a server are skipped, except under
    CI=true, where that is a failure."""
    configured = os.environ.get("PROMPTREG_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = Path(configured) if configured else target / "debug" / "promptreg"
    if binary.exists():
        return binary
    missing = f"{binary} is missing: build it with `cargo build -p promptreg-cli --locked` (or set PROMPTREG_BIN)"
    if configured or os.environ.get("CI") == "true":
        pytest.fail(missing)
    pytest.skip(missing)


def until(what: str, probe: Callable[[], Optional[T]], deadline: float = DEADLINE) -> T:
    """Polls ``probe`` until it returns something, or fails after the deadline."""
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {deadline} s")


@dataclass
class Server:
    """A store holding a copy of an example pack released to ``production``,
    and ``promptreg serve`` on it."""

    dir: Path
    bin: Path
    pack: Path
    url: str = ""
    process: Optional[subprocess.Popen[str]] = None
    log: list[str] = field(default_factory=list)
    drain: Optional[threading.Thread] = None

    def env(self) -> dict[str, str]:
        # Nothing here may read or write the real home directory.
        return {**os.environ, "HOME": str(self.dir / "home")}

    def tool(self, *args: str) -> str:
        """Runs ``promptreg`` on this store and returns what it printed."""
        done = subprocess.run(
            [str(self.bin), *args, "--database", str(self.dir / "promptreg.db"), "--color", "never"],
            cwd=self.dir,
            env=self.env(),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"promptreg {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                str(self.bin),
                "serve",
                "--database",
                str(self.dir / "promptreg.db"),
                "--log-format",
                "json",
                "--listen",
                "127.0.0.1:0",
            ],
            cwd=self.dir,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            try:
                address = json.loads(line).get("fields", {}).get("address")
            except json.JSONDecodeError:
                continue
            if address:
                self.url = f"http://{address}"
                break
        if not self.url:
            raise AssertionError("promptreg serve did not start:\n" + "".join(self.log))
        # Keep reading its log, so that the server never blocks on a full pipe.
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=DEADLINE)
        if self.drain is not None:
            self.drain.join(timeout=DEADLINE)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """The web-agent example pack released to ``production`` on a real server."""
    binary = promptreg_bin()
    (tmp_path / "home").mkdir()
    pack = tmp_path / "web-agent"
    shutil.copytree(EXAMPLES / "web-agent", pack)
    served = Server(dir=tmp_path, bin=binary, pack=pack)
    served.tool("store", "push", str(pack), "--message", "First version")
    served.tool("store", "release", "latest", "production")
    served.start()
    try:
        yield served
    finally:
        promptreg.close_all()
        served.stop()


def run_python(script: Path, cwd: Path, env: Optional[dict[str, str]] = None) -> str:
    """Runs ``script`` with this interpreter and returns what it printed."""
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout
