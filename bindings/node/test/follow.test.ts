// Following a label on a real `promptreg serve`: a store in a temporary
// folder holding the web-agent example pack, the server on a free loopback
// port, the label moved with the `promptreg` tool, and the registry seeing
// the change. The tool is a debug build: `PROMPTREG_BIN`, else
// `target/debug/promptreg` (`cargo build -p promptreg-cli --locked`);
// without it these tests are skipped, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Pack, PromptRegistry, type FollowChange, type Follower } from 'promptreg';
import { PACK, promptregBinary, startServer, typeErrorNaming, untyped } from './support';

const NARRATOR = 'webagent-narrator.system';
const TRANSLATE = 'translate.system';
/** Generous: the point is that it happens, not how fast. */
const DEADLINE_MS = 60_000;

const { bin, missing } = promptregBinary();

/** Resolves with the first change `pick` accepts, or rejects after the deadline. */
function changes(follower: () => Follower | undefined) {
  const seen: FollowChange[] = [];
  const waiters: { pick: (c: FollowChange) => boolean; resolve: (c: FollowChange) => void }[] = [];
  return {
    seen,
    onChange(change: FollowChange) {
      seen.push(change);
      for (const waiter of [...waiters]) {
        if (waiter.pick(change)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(change);
        }
      }
    },
    next(what: string, pick: (c: FollowChange) => boolean): Promise<FollowChange> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no ${what} within ${DEADLINE_MS} ms; changes: ${JSON.stringify(seen)}; status: ${JSON.stringify(follower()?.status())}`));
        }, DEADLINE_MS);
        waiters.push({
          pick,
          resolve: (change) => {
            clearTimeout(timer);
            resolve(change);
          },
        });
      });
    },
  };
}

/** Polls `probe` until it returns a value, or rejects after the deadline. */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - start > DEADLINE_MS) throw new Error(`no ${what} within ${DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('follow a label: first sync, render, the label moves with the tool, onChange, the new text', { skip: missing }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-node-follow-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const server = await startServer(bin!, dir);
  t.after(() => server.stop());

  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'The host’s own text, until a sync.');
  let follower: Follower | undefined;
  const seen = changes(() => follower);
  const firstUpdate = seen.next('first update', (c) => c.kind === 'updated');
  follower = prompts.follow({
    server: server.url,
    pack: PACK,
    label: 'production',
    cacheDir: path.join(dir, 'cache'),
    instanceId: 'node-1',
    instanceName: 'the Node.js test',
    reportIntervalMs: 500,
    onChange: (change) => seen.onChange(change),
  });
  t.after(() => follower?.close());
  assert.equal(follower.isOpen, true);

  assert.equal(await follower.waitForFirstSync(DEADLINE_MS), true);
  const first = await firstUpdate;
  assert.equal(first.source, 'server');
  assert.ok(first.etag);
  const status = follower.status();
  assert.equal(status.server, server.url);
  assert.equal(status.pack, PACK);
  assert.equal(status.label, 'production');
  assert.equal(status.source, 'server');
  assert.equal(status.etag, first.etag);
  assert.equal(status.versions[NARRATOR], 1);
  assert.equal(typeof status.sinceLastSyncMs, 'number');
  assert.equal(follower.pack?.name, PACK);
  assert.equal(status.revision, 1);
  assert.equal(status.instance, 'node-1');
  // The server's fleet view has it, from its reports.
  const fleet = await until('the fleet report', async () => {
    const view = await (await fetch(`${server.url}/v1/packs/${PACK}/labels/production/fleet`)).json();
    // The first report may go before the first sync: wait for the one
    // that names the revision.
    return view.instances.length === 1 && view.instances[0].revision === 1 ? view : undefined;
  });
  assert.equal(fleet.instances[0].instance, 'node-1');
  assert.equal(fleet.instances[0].name, 'the Node.js test');
  assert.match(fleet.instances[0].library, /^promptreg-node\//);
  assert.equal(fleet.instances[0].revision, 1);
  assert.equal(follower.status().reportError, undefined);

  // The pack's prompts are in the registry: text and chat.
  assert.equal(prompts.render('translate.system').startsWith('The host'), false);
  const ctx = JSON.parse(fs.readFileSync(path.join(server.pack, 'context.json'), 'utf8'));
  assert.equal(prompts.isChat(NARRATOR), true);
  const before = prompts.renderMessages(NARRATOR, ctx);
  assert.ok(before[0].content.startsWith('You are the friendly assistant of Acme Outdoor'), before[0].content);
  const trace = prompts.renderMessagesTraced(NARRATOR, ctx);
  assert.equal(trace.model?.model, 'gpt-4o-mini');
  assert.match(trace.messages[0].parts[0].provenance?.file ?? '', new RegExp(`/v1/packs/${PACK}/labels/production/`));
  assert.equal(trace.messages[0].parts[0].provenance?.label, 'production');
  assert.equal(trace.messages[0].parts[0].provenance?.revision, 1);
  // What the host adds to its LLM call's span.
  assert.equal(trace.traceAttributes['promptreg.prompt.id'], NARRATOR);
  assert.equal(trace.traceAttributes['promptreg.prompt.version'], 1);
  assert.equal(trace.traceAttributes['promptreg.label'], 'production');
  assert.equal(trace.traceAttributes['promptreg.revision'], 1);
  assert.match(String(trace.traceAttributes['promptreg.prompt.digest']), /^[0-9a-f]{64}$/);
  assert.equal(trace.traceAttributes['promptreg.locale'], trace.locale);

  // A new version, released to `production` by another process.
  const file = path.join(server.pack, 'defaults', `${NARRATOR}.md`);
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.replace('You are the {{ persona }} assistant', 'You are the {{ persona }} guide'));
  const moved = seen.next('update after the move', (c) => c.kind === 'updated' && c.etag !== first.etag);
  server.store('push', server.pack, '--message', 'A guide, not an assistant');
  server.store('release', 'latest', 'production');
  const update = await moved;
  assert.equal(update.source, 'server');

  const after = prompts.renderMessages(NARRATOR, ctx);
  assert.ok(after[0].content.startsWith('You are the friendly guide of Acme Outdoor'), after[0].content);
  assert.equal(follower.status().versions[NARRATOR], 2);
  assert.equal(follower.status().revision, 2);
  assert.equal(prompts.renderMessagesTraced(NARRATOR, ctx).traceAttributes['promptreg.revision'], 2);
  assert.ok(seen.seen.some((c) => c.kind === 'connected'), JSON.stringify(seen.seen));
  assert.ok(seen.seen.some((c) => c.kind === 'event' && c.event), JSON.stringify(seen.seen));
  follower.resync();

  // A gradual release: `latest` one step ahead serves half the subjects.
  const translate = path.join(server.pack, 'defaults', 'translate.system.md');
  fs.writeFileSync(translate, fs.readFileSync(translate, 'utf8').replace('You translate web page text', 'You carefully translate web page text'));
  // The candidate's Japanese narrator says "guide": a subject picks its
  // arm for chat prompts and any locale too.
  const narratorJa = path.join(server.pack, 'defaults', `${NARRATOR}.ja.md`);
  fs.writeFileSync(narratorJa, fs.readFileSync(narratorJa, 'utf8').replace('なアシスタントです。', 'なガイドです。'));
  server.store('push', server.pack, '--message', 'Carefully');
  server.store('canary', 'production', '--from', 'latest', '--percent', '50');
  const split = await until('the split', async () => follower?.status().split ?? undefined);
  assert.equal(split.percent, 50);
  const subject = (arm: string) => {
    for (let n = 0; ; n++) if (prompts.armFor(`user-${n}`)?.arm === arm) return `user-${n}`;
  };
  const [stable, chosen] = [subject('stable'), subject('candidate')];
  assert.deepEqual(prompts.armFor(chosen), { split: split.split, arm: 'candidate' });
  const careful = prompts.renderTracedFor(chosen, 'translate.system');
  assert.ok(careful.text.startsWith('You carefully translate'), careful.text);
  assert.equal(careful.traceAttributes['promptreg.split'], split.split);
  assert.equal(careful.traceAttributes['promptreg.arm'], 'candidate');
  assert.equal(careful.parts[0].provenance?.split, split.split);
  assert.ok(prompts.renderFor(stable, 'translate.system').startsWith('You translate'));
  assert.equal(prompts.renderTracedFor(stable, 'translate.system').traceAttributes['promptreg.arm'], undefined);
  assert.ok(prompts.render('translate.system').startsWith('You translate'), 'no subject: the label');
  assert.throws(() => untyped(prompts.renderFor.bind(prompts), 7, 'translate.system'), typeErrorNaming('subject'));
  // `{ subject }` on every render: text and chat, any locale, traced or not.
  const ja = (who: string) => prompts.renderMessages(NARRATOR, ctx, 'ja-JP', { conversation: [] }, { subject: who });
  assert.match(ja(chosen)[0].content, /なガイドです。/);
  assert.match(ja(stable)[0].content, /なアシスタントです。/);
  const chatTrace = prompts.renderMessagesTraced(NARRATOR, ctx, 'ja', undefined, { subject: chosen });
  assert.equal(chatTrace.traceAttributes['promptreg.arm'], 'candidate');
  assert.equal(chatTrace.traceAttributes['promptreg.split'], split.split);
  const any = prompts.renderAny(NARRATOR, ctx, 'ja', undefined, { subject: chosen });
  assert.match(any.messages?.[0].content ?? '', /なガイドです。/);
  assert.match(prompts.renderChatAsText(NARRATOR, ctx, 'ja', undefined, { subject: chosen }), /なガイドです。/);
  assert.ok(prompts.render(TRANSLATE, undefined, 'fr', { subject: chosen }).startsWith('You carefully translate'));
  assert.equal(prompts.renderTraced(TRANSLATE, undefined, 'fr', { subject: chosen }).traceAttributes['promptreg.arm'], 'candidate');
  assert.ok(prompts.render(TRANSLATE, undefined, 'fr', { subject: stable }).startsWith('You translate'));

  follower.close();
  assert.equal(follower.isOpen, false);
  follower.close();
  const closed = follower.status();
  assert.equal(closed.connected, false);
  assert.equal(closed.etag, update.etag);
  assert.equal(follower.pack, null);
  assert.equal(await follower.waitForFirstSync(10), false);
  // The registry keeps what was published.
  assert.equal(prompts.renderMessages(NARRATOR, ctx)[0].content, after[0].content);
});

test('a server that does not answer: the host’s prompts stay, the failure is in status()', async (t) => {
  // A loopback port nobody listens on.
  const socket = net.createServer();
  socket.listen(0, '127.0.0.1');
  await once(socket, 'listening');
  const port = (socket.address() as net.AddressInfo).port;
  socket.close();
  await once(socket, 'close');

  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'The host’s own text.');
  const follower = prompts.follow({
    server: `http://127.0.0.1:${port}`,
    pack: PACK,
    diskCache: false,
    timeoutMs: 2_000,
    pollIntervalMs: 60_000,
  });
  t.after(() => follower.close());
  assert.equal(await follower.waitForFirstSync(300), false);
  const start = Date.now();
  while (!follower.status().lastError && Date.now() - start < DEADLINE_MS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const status = follower.status();
  assert.equal(status.source, 'local');
  assert.equal(status.label, 'production');
  assert.ok(status.lastError, JSON.stringify(status));
  assert.equal(status.sinceLastSyncMs, undefined);
  assert.equal(prompts.render('translate.system'), 'The host’s own text.');

  // Closing ends a pending wait at once.
  const waiting = follower.waitForFirstSync(DEADLINE_MS);
  follower.close();
  const closedAt = Date.now();
  assert.equal(await waiting, false);
  assert.ok(Date.now() - closedAt < 5_000);
});

test('follow: bad options are TypeErrors naming the option; no pack is a remote error', () => {
  const prompts = new PromptRegistry();
  const follow = prompts.follow.bind(prompts);
  assert.throws(() => untyped(follow, 'http://127.0.0.1:1'), typeErrorNaming('options'));
  assert.throws(() => untyped(follow), typeErrorNaming('options'));
  assert.throws(() => untyped(follow, { server: 7, pack: PACK }), typeErrorNaming('options.server'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1' }), typeErrorNaming('options.pack'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, label: 1 }), typeErrorNaming('options.label'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, diskCache: 'no' }), typeErrorNaming('options.diskCache'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, timeoutMs: '5' }), typeErrorNaming('options.timeoutMs'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, onChange: 'log' }), typeErrorNaming('options.onChange'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, reports: 'off' }), typeErrorNaming('options.reports'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, instanceId: 7 }), typeErrorNaming('options.instanceId'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, instanceName: {} }), typeErrorNaming('options.instanceName'));
  assert.throws(() => untyped(follow, { server: 'http://127.0.0.1:1', pack: PACK, reportIntervalMs: '1s' }), typeErrorNaming('options.reportIntervalMs'));
  assert.throws(() => prompts.follow({ server: 'http://127.0.0.1:1', pack: PACK, pollIntervalMs: 0 }), (e: any) => {
    assert.ok(e instanceof RangeError);
    assert.equal((e as NodeJS.ErrnoException).code, 'ERR_OUT_OF_RANGE');
    assert.match(e.message, /`options\.pollIntervalMs` must be at least 1 millisecond/);
    return true;
  });
  assert.throws(() => prompts.follow({ server: 'http://127.0.0.1:1', pack: '', diskCache: false }), { code: 'remote' });
});

test('signed releases: trustKeys accepts what a trusted key signed and refuses the rest; a baked bundle loads with Pack.fromBundle', { skip: missing }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-node-signed-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const server = await startServer(bin!, dir);
  t.after(() => server.stop());
  for (const name of ['releaser', 'stranger']) {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path.join(dir, name)]);
  }
  server.store('sign', 'production', '--sign', path.join(dir, 'releaser'));
  const strangerKey = fs.readFileSync(path.join(dir, 'stranger.pub'), 'utf8');

  const trusting = new PromptRegistry();
  const trusted = trusting.follow({
    server: server.url,
    pack: PACK,
    diskCache: false,
    reports: false,
    trustKeys: [path.join(dir, 'releaser.pub')],
  });
  t.after(() => trusted.close());
  assert.equal(await trusted.waitForFirstSync(DEADLINE_MS), true);
  assert.match(trusted.status().verifiedBy ?? '', /^SHA256:/);
  assert.ok(trusting.render(TRANSLATE).length > 0);

  const wary = new PromptRegistry();
  wary.registerDefault(TRANSLATE, 'The host’s own translator.');
  const refusing = wary.follow({ server: server.url, pack: PACK, diskCache: false, reports: false, trustKeys: [strangerKey] });
  t.after(() => refusing.close());
  const error = await until('the refusal', async () => refusing.status().lastError ?? undefined);
  assert.match(error, /not trusted here/);
  assert.equal(wary.render(TRANSLATE), 'The host’s own translator.');

  const file = path.join(dir, 'prod.bundle');
  execFileSync(bin!, ['bundle', 'export', '--server', server.url, '--pack', PACK, '-o', file], { cwd: dir });
  await server.stop();
  const baked = Pack.fromBundle(file, { trustKeys: [path.join(dir, 'releaser.pub')] });
  assert.equal(baked.name, PACK);
  const offline = new PromptRegistry();
  baked.install(offline);
  assert.equal(offline.render(TRANSLATE), trusting.render(TRANSLATE));
  assert.throws(() => Pack.fromBundle(file, { trustKeys: [strangerKey] }), (e: any) => e.code === 'signature' && /not trusted here/.test(e.message));
  assert.throws(() => Pack.fromBundle(path.join(dir, 'missing.bundle')), (e: any) => e.code === 'remote' && /missing\.bundle/.test(e.message));
  const registry = new PromptRegistry();
  assert.throws(
    () => untyped((options) => registry.follow(options), { server: server.url, pack: PACK, trustKeys: 'releaser.pub' }),
    typeErrorNaming('options.trustKeys'),
  );
});
