// Helpers the test files share; no tests of its own.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '../../../..');
/** The example pack the test servers serve. */
export const PACK = 'web-agent';

/** Calls `f` with arguments TypeScript would refuse. */
export function untyped(f: (...args: any[]) => unknown, ...args: unknown[]): unknown {
  return f(...args);
}

/** An `assert.throws` check: a TypeError naming `argument`. */
export function typeErrorNaming(argument: string) {
  return (e: unknown) => {
    assert.ok(e instanceof TypeError, `expected a TypeError, got ${String(e)}`);
    assert.equal((e as NodeJS.ErrnoException).code, 'ERR_INVALID_ARG_TYPE');
    assert.match(e.message, new RegExp('`' + argument.replace(/[.[\]]/g, '\\$&') + '`'));
    return true;
  };
}

/** The `promptreg` binary, or why there is none. */
export function promptregBinary(): { bin?: string; missing?: string } {
  const bin =
    process.env.PROMPTREG_BIN ??
    path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'debug', 'promptreg');
  if (fs.existsSync(bin)) {
    return { bin };
  }
  const missing = `${bin} is missing: build it with \`cargo build -p promptreg-cli --locked\` (or set PROMPTREG_BIN)`;
  if (process.env.PROMPTREG_BIN || process.env.CI === 'true') {
    throw new Error(missing);
  }
  return { missing };
}

/** A store with web-agent released to `production`, and `promptreg serve` on it. */
export async function startServer(bin: string, dir: string) {
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const common = ['--database', path.join(dir, 'promptreg.db'), '--color', 'never'];
  const store = (...args: string[]) =>
    execFileSync(bin, ['store', ...args, ...common], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: home },
    });
  const pack = path.join(dir, PACK);
  fs.cpSync(path.join(ROOT, 'examples', PACK), pack, { recursive: true });
  store('push', pack, '--message', 'First version');
  store('release', 'latest', 'production');

  const child = spawn(bin, ['serve', ...common, '--log-format', 'json', '--listen', '127.0.0.1:0'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HOME: home },
  });
  const log: string[] = [];
  const exited = once(child, 'exit');
  const lines = readline.createInterface({ input: child.stderr! });
  const address = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      log.push(line);
      try {
        const address = JSON.parse(line).fields?.address;
        if (address) resolve(address);
      } catch {
        // Not every line need be JSON.
      }
    });
    exited.then(([code, signal]) =>
      reject(new Error(`promptreg serve exited (${code ?? signal}) before listening:\n${log.join('\n')}`)),
    );
  });
  assert.match(address, /^127\.0\.0\.1:\d+$/);
  return {
    url: `http://${address}`,
    pack,
    store,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
