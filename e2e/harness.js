// What the browser tests run against: a store in a temporary folder holding
// the goal-agent example pack in two versions, three API keys, and
// `promptreg serve` on a free loopback port; Debian's Chromium, headless,
// with a fresh profile and no network of its own.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];
export const DATABASE_URL_VAR = 'PROMPTREG_TEST_DATABASE_URL';

/** The pack the tests browse, and the prompt they change. */
export const PACK = 'goal-agent';
export const PROMPT = 'goal-running';
/** A label the pack's manifest gates: it moves only to a state whose tests pass. */
export const GATED = 'stable';
/** The line the second version adds to the prompt's body. */
export const SECOND_VERSION_LINE = '- Tell the user in one line what you are about to change.';

/** The `promptreg` binary of a debug build (`cargo build -p promptreg-cli --locked`). */
export function promptregBinary() {
  const bin =
    process.env.PROMPTREG_BIN ??
    path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'debug', 'promptreg');
  if (!fs.existsSync(bin)) {
    throw new Error(`${bin} is missing: build it with \`cargo build -p promptreg-cli --locked\` (or set PROMPTREG_BIN)`);
  }
  return bin;
}

/**
 * Chromium with exactly our flags: Playwright's own defaults are left out
 * (`ignoreDefaultArgs: true`), so it gets only the pipe Playwright talks
 * through and an empty profile of its own, removed by `close`.
 */
export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's \`chromium\` package (.ci/run does)`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-e2e-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    ignoreDefaultArgs: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-pipe', '--no-startup-window'],
  });
  return {
    browser,
    async close() {
      await browser.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The databases a run covers: SQLite always; PostgreSQL when
 * PROMPTREG_TEST_DATABASE_URL names a server (a database of its own is
 * created per run). Under CI=true a missing variable is an error, so CI
 * never skips PostgreSQL.
 */
export function databaseKinds() {
  const kinds = ['sqlite'];
  if (process.env[DATABASE_URL_VAR]) {
    kinds.push('postgres');
  } else if (process.env.CI === 'true') {
    throw new Error(`${DATABASE_URL_VAR} is not set under CI=true: the PostgreSQL run must not be skipped`);
  } else {
    console.error(`browser tests: PostgreSQL skipped (${DATABASE_URL_VAR} is not set)`);
  }
  return kinds;
}

let databaseCounter = 0;

/** A fresh database of the kind inside `dir`, or on the test server; `drop` removes it. */
export function createDatabase(kind, dir) {
  if (kind === 'sqlite') {
    return { url: path.join(dir, 'promptreg.db'), drop() {} };
  }
  const base = new URL(process.env[DATABASE_URL_VAR]);
  const name = `e2e_${process.pid}_${databaseCounter++}`;
  const psql = (sql) =>
    execFileSync(psqlBinary(), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', base.href, '-c', sql], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  psql(`DROP DATABASE IF EXISTS ${name}`);
  psql(`CREATE DATABASE ${name}`);
  const url = new URL(base.href);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** `psql` of the test cluster (scripts/postgres-for-tests.sh exports its folder), else from PATH. */
function psqlBinary() {
  const dir = process.env.PROMPTREG_TEST_PGBIN;
  if (dir && fs.existsSync(path.join(dir, 'psql'))) {
    return path.join(dir, 'psql');
  }
  return 'psql';
}

/**
 * The goal-agent pack pushed twice into a new store of `kind` (v1 of every
 * prompt released to `production`, which is protected; v2 of
 * `goal-running` adds a line), an `admin`, a `writer` and a `reader` key,
 * and the server on a free port. `stop` sends SIGTERM and checks it exits
 * cleanly, then removes everything.
 */
export async function startRegistry(kind) {
  const bin = promptregBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-e2e-'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const database = createDatabase(kind, dir);
  const common = ['--database', database.url, '--color', 'never'];
  const run = (...args) => {
    const [command, sub, ...rest] = args;
    return execFileSync(bin, [command, sub, ...common, ...rest], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: home } });
  };
  try {
    const pack = path.join(dir, PACK);
    fs.cpSync(path.join(ROOT, 'examples', PACK), pack, { recursive: true });
    // `stable` is gated: the second version fails the pack's snapshot.
    fs.appendFileSync(path.join(pack, 'promptreg.toml'), `\n[release]\ngated = ["${GATED}"]\n`);
    run('store', 'push', pack, '--message', 'First version');
    run('store', 'release', 'latest', 'production');
    run('store', 'release', 'latest', GATED);
    run('store', 'protect', 'production', '--admin');
    fs.appendFileSync(path.join(pack, 'defaults', `${PROMPT}.md`), `${SECOND_VERSION_LINE}\n`);
    run('store', 'push', pack, '--message', 'Say what is about to change');
    const key = (name, scope) => JSON.parse(run('keys', 'create', name, '--scope', scope, '--admin', '--json')).secret;
    const keys = { admin: key('ada', 'admin'), write: key('wes', 'write'), read: key('rea', 'read') };
    const server = await serve(bin, [...common, '--log-format', 'json', '--listen', '127.0.0.1:0'], dir, home);
    return {
      kind,
      url: server.url,
      keys,
      log: server.log,
      async stop() {
        try {
          await server.stop();
        } finally {
          database.drop();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** `promptreg serve`, once it says where it listens (a JSON log line on stderr). */
export async function serve(bin, args, cwd, home) {
  const child = spawn(bin, ['serve', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: home } });
  const log = [];
  const exited = once(child, 'exit');
  const lines = readline.createInterface({ input: child.stderr });
  const address = await new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      log.push(line);
      try {
        const address = JSON.parse(line).fields?.address;
        if (address) resolve(address);
      } catch {
        // Not every line need be JSON (a panic's message is not).
      }
    });
    exited.then(([code, signal]) =>
      reject(new Error(`promptreg serve exited (${code ?? signal}) before listening:\n${log.join('\n')}`)),
    );
  });
  return {
    url: `http://${address}`,
    log,
    /** Kills it at once (SIGKILL), as a crash would, and waits for the exit. */
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      const [code, signal] = await exited;
      if (code !== 0) {
        throw new Error(`promptreg serve did not stop cleanly on SIGTERM (${code ?? signal}):\n${log.join('\n')}`);
      }
    },
  };
}

export const SCREENSHOTS = path.join(ROOT, 'target', 'e2e-screenshots');

/** The whole page as `target/e2e-screenshots/<kind>/<name>.png`, a test artifact. */
export async function screenshot(page, kind, name) {
  const dir = path.join(SCREENSHOTS, kind);
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** How long a page or element may take to appear, in milliseconds. */
export const TIMEOUT = 15_000;

/**
 * A new browser context (its own cookies) signed in with `secret` through
 * the sign-in form; returns its page, on the pack list.
 */
export async function signIn(browser, registry, secret) {
  const context = await browser.newContext({ baseURL: registry.url, viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(TIMEOUT);
  context.setDefaultNavigationTimeout(TIMEOUT);
  const page = await context.newPage();
  await page.goto('/sign-in');
  await page.getByLabel('API key', { exact: true }).fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${registry.url}/`);
  return page;
}

/**
 * `promptreg follow` of the pack's `auditor` (a prompt that needs no
 * context) at `production` on `registry`, reporting
 * every half second as instance `id` named `name`, in a folder of its own
 * (no configuration is read); `kill` stops it at once (SIGKILL), as a
 * crash would.
 */
export function startFollower(registry, secret, id, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-e2e-follower-'));
  const child = spawn(
    promptregBinary(),
    ['--home', dir, `--cwd=${dir}`, '--server', registry.url, '--pack', PACK, '--key', secret,
      'follow', 'auditor', '--report-interval', '500ms', '--instance-id', id, '--instance-name', name],
    { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, HOME: dir } },
  );
  const exited = once(child, 'exit');
  return {
    async kill() {
      child.kill('SIGKILL');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
