// Webhook deliveries of `promptreg serve` checked by an independent
// implementation of the Standard Webhooks scheme (the `standardwebhooks`
// package) in a receiver this test starts: a release verifies, both
// secrets verify during a rotation's overlap, and a server killed
// mid-delivery delivers the same message after its restart, on SQLite and
// PostgreSQL.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import { Webhook } from 'standardwebhooks';

import { ROOT, TIMEOUT, createDatabase, databaseKinds, launchBrowser, promptregBinary, screenshot, serve, signIn } from '../harness.js';

/**
 * A receiver on loopback: every request's headers and body, whether each
 * secret given verifies it, and an answer (`status`); `hangFirst` leaves
 * the first request unanswered, as a receiver that stalls would.
 */
async function startReceiver({ hangFirst = false, status = 204 } = {}) {
  const got = [];
  let hang = hangFirst;
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      got.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (hang) {
        hang = false;
        return;
      }
      response.writeHead(status).end(status === 410 ? 'gone for good' : '');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    got,
    async waitFor(n) {
      const deadline = Date.now() + TIMEOUT;
      while (got.length < n) {
        assert.ok(Date.now() < deadline, `the receiver got ${got.length} requests, not ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return got;
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** What `standardwebhooks` makes of a request, with `secret`: the payload, or it throws. */
function verified(request, secret) {
  const headers = {
    'webhook-id': request.headers['webhook-id'],
    'webhook-timestamp': request.headers['webhook-timestamp'],
    'webhook-signature': request.headers['webhook-signature'],
  };
  return new Webhook(secret).verify(request.body, headers);
}

/** A store of `kind` holding the web-agent example, and the tool on it. */
function makeStore(kind) {
  const bin = promptregBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-webhooks-'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const database = createDatabase(kind, dir);
  const common = ['--database', database.url, '--color', 'never'];
  const run = (...args) =>
    execFileSync(bin, [...args, ...common], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: home } });
  const pack = path.join(dir, 'web-agent');
  fs.cpSync(path.join(ROOT, 'examples', 'web-agent'), pack, { recursive: true });
  run('store', 'push', pack, '--message', 'First version');
  // For a command that talks to the receiver, which answers from this
  // process: it must not block the event loop.
  const runAside = async (...args) =>
    (await promisify(execFile)(bin, [...args, ...common], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: home } })).stdout;
  return {
    run,
    runAside,
    serve: (...args) => serve(bin, [...common, '--log-format', 'json', '--listen', '127.0.0.1:0', '--webhooks-allow-private', ...args], dir, home),
    cleanup() {
      database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const kind of databaseKinds()) {
  describe(`webhooks (${kind})`, () => {
    test('a release reaches the receiver signed as the scheme says', async () => {
      const store = makeStore(kind);
      const receiver = await startReceiver();
      try {
        const made = JSON.parse(store.run('webhooks', 'create', 'ci', receiver.url, '--event', 'label.released', '--admin', '--json'));
        const server = await store.serve();
        try {
          store.run('store', 'release', 'latest', 'production', '--reason', 'ship it');
          const [request] = await receiver.waitFor(1);
          const payload = verified(request, made.secret);
          assert.equal(payload.type, 'label.released');
          assert.equal(payload.data.pack, 'web-agent');
          assert.equal(payload.data.label, 'production');
          assert.match(payload.data.reason, /ship it/);
          assert.ok(payload.data.prompts.length > 0);
          assert.equal(payload.data.url, `${server.url}/packs/web-agent/labels/production`);
          assert.throws(() => verified(request, `whsec_${Buffer.alloc(32, 7).toString('base64')}`), /signature/i);
        } finally {
          await server.stop();
        }
      } finally {
        receiver.close();
        store.cleanup();
      }
    });

    test('both secrets verify during a rotation', async () => {
      const store = makeStore(kind);
      const receiver = await startReceiver();
      try {
        const old = JSON.parse(store.run('webhooks', 'create', 'chat', receiver.url, '--admin', '--json')).secret;
        const rotated = JSON.parse(store.run('webhooks', 'rotate', 'chat', '--overlap', '1h', '--admin', '--json'));
        assert.notEqual(rotated.secret, old);
        const sent = JSON.parse(await store.runAside('webhooks', 'test', 'chat', '--allow-private', '--admin', '--json'));
        assert.equal(sent.state, 'delivered');
        const [request] = await receiver.waitFor(1);
        assert.equal(verified(request, old).type, 'webhook.test');
        assert.equal(verified(request, rotated.secret).type, 'webhook.test');
      } finally {
        receiver.close();
        store.cleanup();
      }
    });

    test('a server killed mid-delivery delivers the same message after its restart', async () => {
      const store = makeStore(kind);
      const receiver = await startReceiver({ hangFirst: true });
      try {
        const made = JSON.parse(store.run('webhooks', 'create', 'ci', receiver.url, '--event', 'label.released', '--admin', '--json'));
        // A one-second timeout: a delivery is leased for three.
        const crashing = await store.serve('--webhooks-timeout', '1');
        store.run('store', 'release', 'latest', 'production');
        const [first] = await receiver.waitFor(1);
        await crashing.kill();
        const restarted = await store.serve('--webhooks-timeout', '1');
        try {
          const [, again] = await receiver.waitFor(2);
          assert.equal(again.headers['webhook-id'], first.headers['webhook-id']);
          assert.equal(verified(again, made.secret).type, 'label.released');
          // The attempt is recorded once the receiver has answered.
          const deadline = Date.now() + TIMEOUT;
          for (;;) {
            const log = JSON.parse(store.run('webhooks', 'log', 'ci', '--json'));
            const delivery = log.find((d) => d.message_id === first.headers['webhook-id']);
            if (delivery.state === 'delivered') break;
            assert.ok(Date.now() < deadline, JSON.stringify(delivery));
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        } finally {
          await restarted.stop();
        }
      } finally {
        receiver.close();
        store.cleanup();
      }
    });

    test('the web page makes webhooks, shows their delivery logs, sends again and rotates', async () => {
      const store = makeStore(kind);
      const receiver = await startReceiver();
      const gone = await startReceiver({ status: 410 });
      let chromium;
      try {
        const key = (name, scope) => JSON.parse(store.run('keys', 'create', name, '--scope', scope, '--admin', '--json')).secret;
        const admin = key('ops', 'admin');
        const reader = key('dash', 'read');
        store.run('webhooks', 'create', 'gone', gone.url, '--admin');
        const server = await store.serve();
        try {
          chromium = await launchBrowser();
          const registry = { url: server.url };
          const page = await signIn(chromium.browser, registry, admin);
          await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Webhooks' }).click();
          await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
          // Made on the page: its secret is shown once, and signs what it gets.
          await page.getByLabel('Name', { exact: true }).fill('ci');
          await page.getByLabel('URL', { exact: true }).fill(receiver.url);
          await page.getByLabel('label.released', { exact: true }).check();
          await page.getByRole('button', { name: 'Create webhook' }).click();
          await page.getByRole('status').filter({ hasText: 'The webhook is made' }).waitFor();
          const secret = await page.getByLabel('Signing secret').inputValue();
          assert.match(secret, /^whsec_/);
          store.run('store', 'release', 'latest', 'production');
          const [first] = await receiver.waitFor(1);
          assert.equal(verified(first, secret).type, 'label.released');
          await gone.waitFor(1);
          await page.goto('/webhooks');
          const goneRow = page.getByRole('row').filter({ hasText: 'gone' });
          // A receiver answering 410 asks for no more: the webhook is disabled, and says why.
          for (let tries = 0; !(await goneRow.textContent()).includes('disabled'); tries++) {
            assert.ok(tries < 50, await goneRow.textContent());
            await page.reload();
          }
          assert.match(await goneRow.textContent(), /410 Gone: it asks for no more deliveries/);
          await screenshot(page, kind, 'webhooks');

          await page.getByRole('link', { name: 'ci', exact: true }).click();
          await page.getByRole('heading', { name: 'Webhook ci' }).waitFor();
          const released = page.getByRole('row').filter({ hasText: 'label.released' });
          for (let tries = 0; !(await released.textContent()).includes('delivered'); tries++) {
            assert.ok(tries < 50, await released.textContent());
            await page.reload();
          }
          assert.match(await released.textContent(), /204/);
          await page.getByRole('button', { name: 'Send a test message' }).click();
          await page.getByRole('status').filter({ hasText: 'A test message is queued' }).waitFor();
          await receiver.waitFor(2);
          await released.getByRole('button', { name: 'Send again' }).click();
          await page.getByRole('status').filter({ hasText: 'due again' }).waitFor();
          const [original, , again] = await receiver.waitFor(3);
          assert.equal(again.headers['webhook-id'], original.headers['webhook-id']);
          await screenshot(page, kind, 'webhook-log');

          await page.getByLabel('The old secret signs too for').selectOption({ label: 'an hour' });
          await page.getByRole('button', { name: 'Rotate the secret' }).click();
          await page.getByRole('status').filter({ hasText: 'the old one signs beside it until' }).waitFor();
          assert.notEqual(await page.getByLabel('Signing secret').inputValue(), secret);

          await page.goto('/webhooks/gone');
          await page.getByRole('alert').filter({ hasText: 'Disabled since' }).waitFor();
          await page.getByRole('button', { name: 'Enable' }).click();
          await page.getByRole('status').filter({ hasText: 'enabled' }).waitFor();

          const readerPage = await signIn(chromium.browser, registry, reader);
          assert.equal(await readerPage.getByRole('link', { name: 'Webhooks' }).count(), 0);
          const refused = await readerPage.goto('/webhooks');
          assert.equal(refused.status(), 403);
        } finally {
          await server.stop();
        }
      } finally {
        await chromium?.close();
        receiver.close();
        gone.close();
        store.cleanup();
      }
    });
  });
}
