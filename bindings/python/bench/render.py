"""The Python package's benchmark (BENCHMARKS.md, sections 10.2 and 10.3), in one
process:

1. the goal-agent workload (``goal-running``: a template with a pinned
   head listing the tasks, the body, and the verification snippet) rendered
   through the package, against the same string built with Langfuse's
   prompt ``compile`` on a text prompt made in this process (no server), and
   with an f-string (the floor); all three must give the same text;
2. the memory of 10,000 loaded prompts against the size of their text.

    scripts/python-package.sh --release
    target/python-venv/bin/pip install --require-hashes -r bindings/python/bench/requirements.txt
    target/python-venv/bin/python bindings/python/bench/render.py

Figures are nanoseconds per call, the median of several rounds.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from langfuse.model import Prompt_Text, TextPromptClient

import promptreg

ROOT = Path(__file__).resolve().parents[3]
GOAL_AGENT = ROOT / "examples" / "goal-agent"
ROUNDS = 9
CALLS = 20_000
PROMPTS = 10_000


def per_call(f: Callable[[], object]) -> float:
    """The median over rounds of the nanoseconds one call takes."""
    for _ in range(CALLS // 10):
        f()
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter_ns()
        for _ in range(CALLS):
            f()
        rounds.append((time.perf_counter_ns() - start) / CALLS)
    return statistics.median(rounds)


def task_lines(ctx: dict[str, Any]) -> str:
    return "".join(f"- [{'x' if t['done'] else ' '}] {t['title']}\n" for t in ctx["tasks"])


def main() -> None:
    ctx = json.loads((GOAL_AGENT / "context.json").read_text(encoding="utf-8"))
    registry = promptreg.PromptRegistry()
    promptreg.Pack.load(GOAL_AGENT).install(registry)
    rendered = registry.render("goal-running", ctx)

    # The same prompt as a Langfuse text prompt: Langfuse substitutes
    # {{variables}} and has no loops, so the task list is built in Python
    # and passed as one variable (counted in its time).
    head, rest = rendered.split("\n", 2)[:2], rendered.split("\n", 2)[2]
    body_and_tail = rest[len(task_lines(ctx)) :]
    verification = ctx["verification"]
    assert verification in body_and_tail
    template = (
        "[PI GOAL ACTIVE goalId={{goal_id}}]\nObjective: {{objective}}\n{{tasks}}"
        + body_and_tail.replace(verification, "{{verification}}")
    )
    langfuse = TextPromptClient(
        Prompt_Text(type="text", prompt=template, name="goal-running", version=1, config={}, labels=[], tags=[])
    )

    def langfuse_compile() -> str:
        return langfuse.compile(
            goal_id=ctx["goal_id"],
            objective=ctx["objective"],
            tasks=task_lines(ctx),
            verification=ctx["verification"],
        )

    before, after = body_and_tail.split(verification)

    def f_string() -> str:
        return (
            f"[PI GOAL ACTIVE goalId={ctx['goal_id']}]\nObjective: {ctx['objective']}\n"
            f"{task_lines(ctx)}{before}{ctx['verification']}{after}"
        )

    assert langfuse_compile() == rendered, (langfuse_compile(), rendered)
    assert f_string() == rendered
    assert head[0] == f"[PI GOAL ACTIVE goalId={ctx['goal_id']}]"

    figures = {
        "registry.render (the package)": per_call(lambda: registry.render("goal-running", ctx)),
        "Langfuse TextPromptClient.compile": per_call(langfuse_compile),
        "f-string (the floor)": per_call(f_string),
        "floor: registry.has (a call into the package)": per_call(lambda: registry.has("goal-running")),
    }
    floor = figures["f-string (the floor)"]
    print(f"Python {sys.version.split()[0]}, promptreg {promptreg.__version__}, {len(rendered)} characters rendered")
    for name, ns in figures.items():
        print(f"{name:50} {ns:10,.0f} ns   {ns / floor:5.2f}x the f-string")
    render, compile_ = figures["registry.render (the package)"], figures["Langfuse TextPromptClient.compile"]
    print(f"the package's render against Langfuse's compile: {render / compile_:.2f}x the time")
    memory()


def rss() -> int:
    """The resident set size, after glibc gave back the memory it holds
    free (what a load freed stays resident otherwise)."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory() -> None:
    with tempfile.TemporaryDirectory() as root:
        pack = Path(root)
        (pack / "defaults").mkdir()
        (pack / "promptreg.toml").write_text(
            'name = "many"\nkey_patterns = ["p-*"]\n[user]\nprompts_dir = ".many/prompts/"\n', encoding="utf-8"
        )
        text_bytes = 0
        for i in range(PROMPTS):
            # About 480 bytes of text each, all different.
            text = f"Prompt {i}: " + " ".join(f"rule-{i}-{j} applies here." for j in range(20)) + "\n"
            (pack / "defaults" / f"p-{i:05}.md").write_text(text, encoding="utf-8")
            text_bytes += len(text.encode())
        gc.collect()
        base = rss()
        registry = promptreg.PromptRegistry()
        loaded = promptreg.Pack.load(pack)
        loaded.install(registry)
        del loaded
        gc.collect()
        assert len(registry) == PROMPTS
        assert registry.render("p-00042").startswith("Prompt 42: ")
        grown = rss() - base
        print(
            f"memory of {PROMPTS:,} loaded prompts: {grown / 1e6:.2f} MB (RSS growth), "
            f"text {text_bytes / 1e6:.2f} MB: {grown / text_bytes:.2f}x, "
            f"{(grown - text_bytes) / PROMPTS:.0f} B per prompt beyond its text"
        )


if __name__ == "__main__":
    main()
