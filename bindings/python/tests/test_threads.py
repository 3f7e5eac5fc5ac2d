"""Renders from many Python threads at once, while other threads change the
registry: every render sees one whole state, Python renderers included."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import promptreg
from promptreg import PromptRegistry

from .conftest import EXAMPLES, context

THREADS = 8
RENDERS = 100


def test_renders_from_many_threads_see_whole_states() -> None:
    registry = PromptRegistry()
    promptreg.Pack.load(EXAMPLES / "goal-agent").install(registry)
    registry.register_default("computed", lambda ctx, locale: f"{ctx['n']}:{locale}")
    registry.register_default("nested", lambda ctx, locale: "nested " + registry.render("computed", ctx, locale))
    goal = context("goal-agent")
    expected_goal = registry.render("goal-running", goal)
    versions = {"Rule A.", "Rule B."}
    stop = threading.Event()

    def writer() -> None:
        # Appenders come and go while others render: a render sees the
        # rule or not, never half of a change.
        while not stop.is_set():
            for rule in sorted(versions):
                registry.append("computed", rule)
                registry.reset("computed")

    def reader(worker: int) -> list[str]:
        seen = []
        for n in range(RENDERS):
            ctx = {"n": worker * RENDERS + n}
            text = registry.render("nested", ctx, "ja")
            head = f"nested {ctx['n']}:ja"
            assert text == head or text[len(head) + 2 :] in versions, text
            assert registry.render("goal-running", goal) == expected_goal
            seen.append(text)
        return seen

    changer = threading.Thread(target=writer)
    changer.start()
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(reader, range(THREADS)))
    finally:
        stop.set()
        changer.join()
    assert sum(len(r) for r in results) == THREADS * RENDERS


def test_a_renderer_that_raises_in_one_thread_fails_only_its_render() -> None:
    registry = PromptRegistry()

    def flaky(ctx: int) -> str:
        if ctx % 7 == 0:
            raise ValueError(f"bad {ctx}")
        return f"ok {ctx}"

    registry.register_default("flaky", flaky)

    def render(n: int) -> str:
        try:
            return registry.render("flaky", n)
        except promptreg.RenderError as error:
            assert isinstance(error.__cause__, ValueError)
            assert str(error.__cause__) == f"bad {n}"
            return "failed"

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(render, range(700)))
    assert results == ["failed" if n % 7 == 0 else f"ok {n}" for n in range(700)]
