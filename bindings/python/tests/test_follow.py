"""Following a label on a real ``promptreg serve`` on loopback: a store in a
temporary folder holding the web-agent example pack, the label moved with
the ``promptreg`` tool, and the registry seeing the change; signed
releases and baked bundles."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

import pytest

import promptreg
from promptreg import FollowChange, Pack, PromptRegistry

from .conftest import DEADLINE, Server, context, until

PACK = "web-agent"
NARRATOR = "webagent-narrator.system"
TRANSLATE = "translate.system"


class Changes:
    """The changes a follower reported, from its thread."""

    def __init__(self) -> None:
        self.seen: list[FollowChange] = []
        self.inbox: queue.Queue[FollowChange] = queue.Queue()

    def __call__(self, change: FollowChange) -> None:
        self.inbox.put(change)

    def next(self, what: str, pick: Callable[[FollowChange], bool]) -> FollowChange:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            try:
                change = self.inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(change)
            if pick(change):
                return change
        raise AssertionError(f"no {what} within {DEADLINE} s; changes: {self.seen}")


def fleet(server: Server) -> Any:
    with urllib.request.urlopen(f"{server.url}/v1/packs/{PACK}/labels/production/fleet", timeout=10) as answer:
        return json.load(answer)


def test_follow_a_label_as_it_moves(server: Server) -> None:
    prompts = PromptRegistry()
    prompts.register_default(TRANSLATE, "The host's own text, until a sync.")
    changes = Changes()
    follower = prompts.follow(
        server.url,
        pack=PACK,
        label="production",
        cache_dir=str(server.dir / "cache"),
        instance_id="python-1",
        instance_name="the Python test",
        report_interval=0.5,
        on_change=changes,
    )
    with follower:
        assert follower.is_open
        assert follower.wait_for_first_sync(DEADLINE)
        first = changes.next("first update", lambda c: c.kind == "updated")
        assert first.source == "server" and first.etag
        status = follower.status()
        assert (status.server, status.pack, status.label, status.source) == (server.url, PACK, "production", "server")
        assert status.etag == first.etag
        assert status.versions[NARRATOR] == 1
        assert status.revision == 1
        assert status.instance == "python-1"
        assert isinstance(status.since_last_sync, float)
        assert follower.pack is not None and follower.pack.name == PACK

        # The server's fleet view has this instance, from its reports.
        def reported() -> Any:
            # The first report may go before the first sync: wait for the
            # one that names the revision.
            view = fleet(server)
            return view if [i["revision"] for i in view["instances"]] == [1] else None

        view = until("the fleet report", reported)
        instance = view["instances"][0]
        assert (instance["instance"], instance["name"], instance["revision"]) == ("python-1", "the Python test", 1)
        assert instance["library"].startswith("promptreg-python/")

        ctx = context(PACK)
        assert not prompts.render(TRANSLATE).startswith("The host")
        before = prompts.render_messages(NARRATOR, ctx)
        assert before[0]["content"].startswith("You are the friendly assistant of Acme Outdoor")
        trace = prompts.render_messages_traced(NARRATOR, ctx)
        assert trace.model is not None and trace.model["model"] == "gpt-4o-mini"
        provenance = trace.messages[0].parts[0].provenance
        assert provenance is not None and (provenance.label, provenance.revision) == ("production", 1)
        assert trace.trace_attributes["promptreg.label"] == "production"
        assert trace.trace_attributes["promptreg.revision"] == 1

        # A new version released to `production` by another process.
        narrator = server.pack / "defaults" / f"{NARRATOR}.md"
        narrator.write_text(
            narrator.read_text(encoding="utf-8").replace(
                "You are the {{ persona }} assistant", "You are the {{ persona }} guide"
            ),
            encoding="utf-8",
        )
        server.tool("store", "push", str(server.pack), "--message", "A guide, not an assistant")
        server.tool("store", "release", "latest", "production")
        update = changes.next("the update after the move", lambda c: c.kind == "updated" and c.etag != first.etag)
        assert update.source == "server"
        after = prompts.render_messages(NARRATOR, ctx)
        assert after[0]["content"].startswith("You are the friendly guide of Acme Outdoor")
        assert follower.status().revision == 2
        assert any(c.kind == "connected" for c in changes.seen), changes.seen
        follower.resync()

        # A gradual release: `latest` one step ahead serves half the subjects.
        translate = server.pack / "defaults" / "translate.system.md"
        translate.write_text(
            translate.read_text(encoding="utf-8").replace(
                "You translate web page text", "You carefully translate web page text"
            ),
            encoding="utf-8",
        )
        # The candidate's Japanese narrator says "guide": a subject picks its
        # arm for chat prompts and any locale too.
        narrator_ja = server.pack / "defaults" / f"{NARRATOR}.ja.md"
        narrator_ja.write_text(
            narrator_ja.read_text(encoding="utf-8").replace("なアシスタントです。", "なガイドです。"),
            encoding="utf-8",
        )
        server.tool("store", "push", str(server.pack), "--message", "Carefully")
        server.tool("store", "canary", "production", "--from", "latest", "--percent", "50")
        split, percent = until("the split", lambda: follower.status().split)
        assert percent == 50.0

        def subject(arm: str) -> str:
            return next(f"user-{n}" for n in range(10_000) if (prompts.arm_for(f"user-{n}") or (0, ""))[1] == arm)

        stable, chosen = subject("stable"), subject("candidate")
        assert prompts.arm_for(chosen) == (split, "candidate")
        careful = prompts.render_traced_for(chosen, TRANSLATE)
        assert careful.text.startswith("You carefully translate"), careful.text
        assert careful.trace_attributes["promptreg.arm"] == "candidate"
        assert prompts.render_for(stable, TRANSLATE).startswith("You translate")
        assert prompts.render(TRANSLATE).startswith("You translate")
        # `subject=` on every render: text and chat, any locale, traced or not.
        ja = prompts.render_messages(NARRATOR, ctx, "ja-JP", {"conversation": []}, subject=chosen)
        assert "なガイドです。" in ja[0]["content"]
        ja = prompts.render_messages(NARRATOR, ctx, "ja-JP", subject=stable)
        assert "なアシスタントです。" in ja[0]["content"]
        chat_trace = prompts.render_messages_traced(NARRATOR, ctx, "ja", subject=chosen)
        assert chat_trace.trace_attributes["promptreg.arm"] == "candidate"
        assert chat_trace.trace_attributes["promptreg.split"] == split
        request = prompts.render_chat(NARRATOR, ctx, "ja", subject=chosen)
        assert "なガイドです。" in request.messages[0]["content"]
        assert "なガイドです。" in prompts.render_chat_as_text(NARRATOR, ctx, "ja", subject=chosen)
        assert prompts.render(TRANSLATE, None, "fr", subject=chosen).startswith("You carefully translate")
        assert prompts.render_traced(TRANSLATE, locale="fr", subject=chosen).trace_attributes["promptreg.arm"] == "candidate"
        assert prompts.explain(TRANSLATE, subject=stable).text.startswith("You translate")

    assert not follower.is_open
    follower.close()
    closed = follower.status()
    assert closed.connected is False
    assert follower.pack is None
    assert follower.wait_for_first_sync(0.01) is False
    # The registry keeps what was published.
    assert prompts.render_messages(NARRATOR, context(PACK))[0]["content"] == after[0]["content"]


def test_a_server_that_does_not_answer_keeps_the_host_prompts() -> None:
    # A loopback port nobody listens on.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    prompts = PromptRegistry()
    prompts.register_default(TRANSLATE, "The host's own text.")
    with prompts.follow(
        f"http://127.0.0.1:{port}", pack=PACK, disk_cache=False, timeout=2.0, poll_interval=60.0
    ) as follower:
        assert follower.wait_for_first_sync(0.3) is False
        error = until("the failure", lambda: follower.status().last_error)
        status = follower.status()
        assert (status.source, status.label) == ("local", "production")
        assert error and status.since_last_sync is None
        assert prompts.render(TRANSLATE) == "The host's own text."


def test_signed_releases_and_baked_bundles(server: Server) -> None:
    for name in ("releaser", "stranger"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(server.dir / name)], check=True
        )
    server.tool("store", "sign", "production", "--sign", str(server.dir / "releaser"))
    releaser = str(server.dir / "releaser.pub")
    stranger = (server.dir / "stranger.pub").read_text(encoding="utf-8")

    trusting = PromptRegistry()
    with trusting.follow(server.url, pack=PACK, disk_cache=False, reports=False, trust_keys=[releaser]) as trusted:
        assert trusted.wait_for_first_sync(DEADLINE)
        assert (trusted.status().verified_by or "").startswith("SHA256:")

    wary = PromptRegistry()
    wary.register_default(TRANSLATE, "The host's own translator.")
    with wary.follow(server.url, pack=PACK, disk_cache=False, reports=False, trust_keys=[stranger]) as refusing:
        error = until("the refusal", lambda: refusing.status().last_error)
        assert "not trusted here" in error
        assert wary.render(TRANSLATE) == "The host's own translator."

    bundle = server.dir / "prod.bundle"
    subprocess.run(
        [str(server.bin), "bundle", "export", "--server", server.url, "--pack", PACK, "-o", str(bundle)],
        cwd=server.dir,
        env=server.env(),
        check=True,
        capture_output=True,
    )
    server.stop()
    baked = Pack.from_bundle(bundle, trust_keys=[releaser])
    assert baked.name == PACK
    offline = PromptRegistry()
    baked.install(offline)
    assert offline.render(TRANSLATE) == trusting.render(TRANSLATE)

    # A follower starts from the baked bundle with the server gone.
    cold = PromptRegistry()
    with cold.follow(
        server.url, pack=PACK, disk_cache=False, reports=False, trust_keys=[releaser], bundle=str(bundle), timeout=1.0
    ) as follower:
        assert follower.status().source == "bundle"
        assert cold.render(TRANSLATE) == trusting.render(TRANSLATE)

    with pytest.raises(promptreg.SignatureError, match="not trusted here"):
        Pack.from_bundle(bundle, trust_keys=[stranger])
    with pytest.raises(promptreg.RemoteError, match="missing.bundle"):
        Pack.from_bundle(server.dir / "missing.bundle")
    with pytest.raises(TypeError):
        PromptRegistry().follow(server.url, pack=PACK, trust_keys=releaser)
