// MCP clients of another language (the official TypeScript SDK) against
// both transports: `promptreg serve`'s `/mcp` (Streamable HTTP, API keys)
// and `promptreg mcp` over standard input and output (a pack folder, and a
// server's label followed). Each initialises, lists a page at a time, gets
// a prompt with typed arguments and with a bad one, completes an argument,
// and hears `list_changed` when what it sees changes.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { ROOT, TIMEOUT, promptregBinary, serve } from '../harness.js';

/** A pack whose prompt declares one variable of each kind. */
const TYPED = 'typed';
const FRONT_MATTER = `---
description: "Brief: a short text on one topic"
template: true
metadata: { title: Brief }
variables:
  topic: { required: true, description: What the brief is about, schema: { type: string, examples: [returns, shipping] } }
  words: { type: number, default: 100, description: How many words at most }
  tone: { default: plain, schema: { enum: [plain, friendly, formal] } }
  bullets: { type: boolean, default: false }
  points: { type: list, default: [] }
---
`;
const BRIEF = `${FRONT_MATTER}Write a {{ tone }} brief of at most {{ words }} words about {{ topic }}.{% if bullets %} Use bullet points.{% endif %}{% for point in points %}
- {{ point }}{% endfor %}
`;
const BRIEF_ARGUMENTS = { topic: 'returns', words: '50', tone: 'friendly', bullets: 'true', points: '["tents", "boots"]' };
const BRIEF_TEXT = 'Write a friendly brief of at most 50 words about returns. Use bullet points.\n- tents\n- boots';

/** A store holding the web-agent example and the typed pack, released to `production`. */
function makeStore() {
  const bin = promptregBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-mcp-'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const common = ['--database', path.join(dir, 'promptreg.db'), '--color', 'never'];
  const run = (...args) =>
    execFileSync(bin, [...args, ...common], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: home } });
  const typed = path.join(dir, TYPED);
  fs.mkdirSync(path.join(typed, 'defaults'), { recursive: true });
  fs.writeFileSync(path.join(typed, 'promptreg.toml'), `name = "${TYPED}"\nkeys = ["brief"]\ndefault_locale = "en"\n`);
  fs.writeFileSync(path.join(typed, 'defaults', 'brief.md'), BRIEF);
  const webAgent = path.join(dir, 'web-agent');
  fs.cpSync(path.join(ROOT, 'examples', 'web-agent'), webAgent, { recursive: true });
  for (const pack of [typed, webAgent]) {
    run('store', 'push', pack, '--message', 'First version');
    run('store', 'release', 'latest', 'production', '--name', path.basename(pack));
  }
  // A pack with no `production` label: nothing of it is served.
  const elsewhere = path.join(dir, 'elsewhere');
  fs.cpSync(typed, elsewhere, { recursive: true });
  fs.writeFileSync(path.join(elsewhere, 'promptreg.toml'), 'name = "elsewhere"\nkeys = ["brief"]\ndefault_locale = "en"\n');
  run('store', 'push', elsewhere, '--message', 'Not released');
  const key = (name, ...rest) => JSON.parse(run('keys', 'create', name, '--scope', 'read', ...rest, '--admin', '--json')).secret;
  const keys = { reader: key('reader'), typedOnly: key('typed-only', '--pack', TYPED), outsider: key('outsider', '--pack', 'elsewhere') };
  return { bin, dir, home, common, run, typed, keys };
}

/** The typed pack's prompt with `sentence` in place of its first line, pushed and released. */
function changeBrief(store, sentence) {
  const file = path.join(store.typed, 'defaults', 'brief.md');
  fs.writeFileSync(file, `${FRONT_MATTER}${sentence}\n`);
  store.run('store', 'push', store.typed, '--message', 'Say it differently');
  store.run('store', 'release', 'latest', 'production', '--name', TYPED);
}

/** Every prompt, a page at a time, and how many pages it took. */
async function listAll(client) {
  const prompts = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listPrompts(cursor ? { cursor } : {});
    prompts.push(...page.prompts);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor);
  return { prompts, pages };
}

/**
 * How long a change may take to be heard: it includes the push and the
 * release that make it (two runs of a debug `promptreg`), on a busy machine.
 */
const HEARD_WITHIN = 4 * TIMEOUT;

/** A client that counts `list_changed` and can wait for the next one. */
function listeningClient() {
  const client = new Client({ name: 'promptreg-e2e', version: '0.0.0' }, { capabilities: {} });
  let heard = 0;
  const waiters = [];
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    heard += 1;
    waiters.splice(0).forEach((resolve) => resolve());
  });
  client.nextListChanged = () =>
    new Promise((resolve, reject) => {
      waiters.push(resolve);
      setTimeout(() => reject(new Error(`no list_changed within ${HEARD_WITHIN} ms (heard ${heard})`)), HEARD_WITHIN).unref();
    });
  return client;
}

/** The MCP error a call fails with. */
async function mcpError(call) {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof McpError, `expected an McpError, got ${error}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** The checks both transports pass on the typed prompt named `name`. */
async function checkTyped(client, name) {
  const listed = (await listAll(client)).prompts.find((p) => p.name === name);
  assert.ok(listed, `${name} is listed`);
  assert.equal(listed.title, 'Brief');
  const byName = Object.fromEntries(listed.arguments.map((a) => [a.name, a]));
  assert.equal(byName.topic.required, true);
  assert.equal(byName.words.required, false);
  assert.equal(byName.words.description, 'How many words at most (number; default `100`)');
  assert.match(byName.tone.description, /^One of `plain`, `friendly`, `formal`; default `plain`$/);
  assert.deepEqual(listed._meta['promptreg/arguments'].tone.enum, ['plain', 'friendly', 'formal']);
  assert.equal(listed._meta['promptreg/arguments'].bullets.type, 'boolean');

  const got = await client.getPrompt({ name, arguments: BRIEF_ARGUMENTS });
  assert.equal(got.messages.length, 1);
  assert.equal(got.messages[0].role, 'user');
  assert.equal(got.messages[0].content.text, BRIEF_TEXT);
  assert.equal(got._meta['promptreg/locale'], 'en');
  assert.equal(got._meta['promptreg/parts'][0].origin, 'default');

  const bad = await mcpError(() => client.getPrompt({ name, arguments: { ...BRIEF_ARGUMENTS, words: 'many' } }));
  assert.equal(bad.code, ErrorCode.InvalidParams);
  assert.match(bad.message, /argument `words` of `.*brief` must be a number/);
  const notAllowed = await mcpError(() => client.getPrompt({ name, arguments: { ...BRIEF_ARGUMENTS, tone: 'angry' } }));
  assert.match(notAllowed.message, /must be one of `plain`, `friendly`, `formal`/);
  const missing = await mcpError(() => client.getPrompt({ name, arguments: {} }));
  assert.match(missing.message, /needs argument `topic` \(What the brief is about\)/);

  const tones = await client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'tone', value: 'f' } });
  assert.deepEqual(tones.completion.values, ['friendly', 'formal']);
  const topics = await client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'topic', value: '' } });
  assert.deepEqual(topics.completion.values, ['returns', 'shipping']);
}

describe('MCP over Streamable HTTP (promptreg serve)', () => {
  let store;
  let server;
  const clients = [];

  before(async () => {
    store = makeStore();
    server = await serve(store.bin, [...store.common, '--log-format', 'json', '--listen', '127.0.0.1:0', '--mcp-page-size', '4'], store.dir, store.home);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.stop();
    fs.rmSync(store.dir, { recursive: true, force: true });
  });

  async function connect(key, query = '') {
    const client = listeningClient();
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  test('a reader lists every pack, a page at a time, names prefixed by the pack', async () => {
    const client = await connect(store.keys.reader);
    assert.equal(client.getServerVersion().name, 'promptreg');
    const { prompts, pages } = await listAll(client);
    assert.equal(prompts.length, 10);
    assert.equal(pages, 3);
    assert.ok(prompts.some((p) => p.name === 'web-agent/webagent-narrator.system'));
    const narrator = prompts.find((p) => p.name === 'web-agent/webagent-narrator.system');
    assert.equal(narrator._meta['promptreg/version'], 1);
    assert.equal(narrator._meta['promptreg/label'], 'production');
  });

  test('typed arguments, a bad one, completion', async () => {
    await checkTyped(await connect(store.keys.reader), `${TYPED}/brief`);
  });

  test('a chat prompt in the session locale: system as user, version and digest in _meta', async () => {
    const client = await connect(store.keys.reader, '?pack=web-agent&locale=ja');
    const got = await client.getPrompt({ name: 'webagent-narrator.system', arguments: { brand: 'Acme' } });
    assert.deepEqual(
      got.messages.map((m) => m.role),
      ['user', 'user', 'assistant'],
    );
    assert.equal(got.messages[0].content._meta['promptreg/role'], 'system');
    assert.match(got.messages[0].content.text, /Acme/);
    assert.equal(got._meta['promptreg/locale'], 'ja');
    assert.equal(got._meta['promptreg/version'], 1);
    assert.match(got._meta['promptreg/digest'], /^[0-9a-f]{64}$/);
  });

  test('a label move sends list_changed, and the new text follows', async () => {
    const client = await connect(store.keys.reader, `?pack=${TYPED}`);
    await client.listPrompts();
    const heard = client.nextListChanged();
    changeBrief(store, 'Write a {{ tone }} note about {{ topic }}.');
    await heard;
    const got = await client.getPrompt({ name: 'brief', arguments: { topic: 'returns' } });
    assert.equal(got.messages[0].content.text, 'Write a plain note about returns.');
    assert.equal(got._meta['promptreg/version'], 2);
  });

  test('a key sees only what it may read; a prompt it may not is not found, like one that does not exist', async () => {
    const typedOnly = await connect(store.keys.typedOnly);
    const { prompts } = await listAll(typedOnly);
    assert.deepEqual(prompts.map((p) => p.name), [`${TYPED}/brief`]);
    const hidden = await mcpError(() => typedOnly.getPrompt({ name: 'web-agent/planner.system' }));
    const absent = await mcpError(() => typedOnly.getPrompt({ name: 'web-agent/no-such-prompt' }));
    assert.equal(hidden.code, absent.code);
    assert.equal(hidden.message.replace('planner.system', 'X'), absent.message.replace('no-such-prompt', 'X'));

    const outsider = await connect(store.keys.outsider);
    assert.deepEqual((await listAll(outsider)).prompts, []);
  });

  test('no key, no session', async () => {
    const client = new Client({ name: 'promptreg-e2e', version: '0.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`))), /401|Unauthorized|api key/i);
  });
});

describe('MCP over standard input and output (promptreg mcp)', () => {
  let store;
  let server;
  const clients = [];

  before(async () => {
    store = makeStore();
    server = await serve(store.bin, [...store.common, '--log-format', 'json', '--listen', '127.0.0.1:0'], store.dir, store.home);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.stop();
    fs.rmSync(store.dir, { recursive: true, force: true });
  });

  async function spawnMcp(...args) {
    const client = listeningClient();
    const transport = new StdioClientTransport({
      command: store.bin,
      args: ['mcp', ...args, '--cwd', store.dir, '--home', store.home],
      env: { ...process.env, HOME: store.home, PROMPTREG_KEY: store.keys.reader },
      stderr: 'pipe',
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  test('a pack folder: paginated, typed, and reloaded when a file changes', async () => {
    const client = await spawnMcp('--pack', store.typed, '--page-size', '1');
    await checkTyped(client, 'brief');
    const heard = client.nextListChanged();
    fs.writeFileSync(path.join(store.typed, 'defaults', 'brief.md'), `${FRONT_MATTER}Write about {{ topic }} now.\n`);
    await heard;
    const got = await client.getPrompt({ name: 'brief', arguments: { topic: 'boots' } });
    assert.equal(got.messages[0].content.text, 'Write about boots now.');
  });

  test("a server's label, followed: a move sends list_changed", async () => {
    const client = await spawnMcp('--server', server.url, '--pack', 'web-agent', '--label', 'production', '--no-reports');
    const { prompts, pages } = await listAll(client);
    assert.equal(prompts.length, 9);
    assert.equal(pages, 1);
    const heard = client.nextListChanged();
    const planner = path.join(store.dir, 'web-agent', 'defaults', 'planner.system.md');
    fs.appendFileSync(planner, '- Say which step you are on.\n');
    store.run('store', 'push', path.join(store.dir, 'web-agent'), '--message', 'Steps');
    store.run('store', 'release', 'latest', 'production', '--name', 'web-agent');
    await heard;
    const got = await client.getPrompt({ name: 'planner.system' });
    assert.match(got.messages[0].content.text, /Say which step you are on\.$/);
    assert.equal(got._meta['promptreg/version'], 2);
    assert.equal(got._meta['promptreg/label'], 'production');
  });
});
