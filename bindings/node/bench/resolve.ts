// `npm run bench`: the coding-agent extension's resolver workload (a 4 KB
// default, a global and a local user file, mode append), three ways in one
// Node.js process:
//
// 1. the extension's own resolver, re-implemented here from its rules as
//    plain TypeScript with an mtime cache (a stat per file per call, a read
//    only when the mtime changed);
// 2. `registry.render` through the binding, the configuration loaded once;
// 3. the binding's stateless `resolvePrompt` (reads the files each call).
//
// All three must produce the same text; the figures are nanoseconds per
// call, the median of several rounds.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { PromptRegistry, resolvePrompt } from 'promptreg';

const KEY = 'goal-running';
const PROMPTS_DIR = '.pi/pi-goal-xx/prompts/';
const MODE = 'append';

type Mode = 'override' | 'append' | 'global-local' | 'local' | 'global-local-merge' | 'off';
interface PromptCfg {
  mode?: Mode;
  inline?: string;
}

/** The extension's resolver, from its rules, with its mtime cache. */
class TsResolver {
  private cache = new Map<string, { mtimeMs: number; text: string | undefined }>();

  private read(file: string): string | undefined {
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
    } catch {
      this.cache.delete(file);
      return undefined;
    }
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === mtimeMs) return cached.text;
    const text = fs.readFileSync(file, 'utf8').trim() || undefined;
    this.cache.set(file, { mtimeMs, text });
    return text;
  }

  resolve(key: string, cfg: PromptCfg, cwd: string, defaultPrompt: string, opts: { home: string; promptsDir: string }) {
    const inline = cfg.inline?.trim();
    if (inline) return { final: inline, injected: inline, source: 'inline' as const };
    const mode = cfg.mode ?? 'global-local';
    if (mode === 'off') return { final: defaultPrompt, source: 'none' as const };
    const global = () => this.read(path.join(opts.home, opts.promptsDir, `${key}.md`));
    const local = () => (cwd ? this.read(path.join(cwd, opts.promptsDir, `${key}.md`)) : undefined);
    let injected: string | undefined;
    let source: 'global' | 'local' | 'merged' | 'none' = 'none';
    if (mode === 'local') {
      injected = local();
      if (injected) source = 'local';
    } else if (mode === 'global-local-merge') {
      const g = global();
      const l = local();
      injected = g && l ? `${g}\n\n${l}` : g ?? l;
      source = g && l ? 'merged' : g ? 'global' : l ? 'local' : 'none';
    } else {
      const l = local();
      injected = l ?? global();
      source = l ? 'local' : injected ? 'global' : 'none';
    }
    if (!injected) return { final: defaultPrompt, source: 'none' as const };
    const final = mode === 'override' ? injected : `${defaultPrompt}\n\n${injected}`;
    return { final, injected, source };
  }
}

function workload() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-bench-'));
  const home = path.join(root, 'home');
  const cwd = path.join(root, 'project');
  const line = 'Work through the task list in order; run the checks that prove each task works. ';
  const defaultPrompt = line.repeat(Math.ceil(4096 / line.length)).slice(0, 4096);
  for (const [dir, text] of [
    [home, 'Global: prefer small commits.'],
    [cwd, 'Local: delegate implementation to a team.'],
  ]) {
    fs.mkdirSync(path.join(dir, PROMPTS_DIR), { recursive: true });
    fs.writeFileSync(path.join(dir, PROMPTS_DIR, `${KEY}.md`), text);
  }
  fs.writeFileSync(path.join(cwd, '.pi/pi-goal-xx-settings.json'), JSON.stringify({ prompts: { [KEY]: { mode: MODE } } }));
  // The user's files were saved before the agent runs: `resolvePrompt`
  // reads again at every call a file changed in the last two seconds.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2_100);
  return { root, home, cwd, defaultPrompt };
}

/** Nanoseconds per call of `run`, the median of `rounds` rounds. */
function measure(run: () => string, calls: number, rounds = 7): number {
  for (let i = 0; i < calls / 10; i++) run();
  const perCall: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run();
    perCall.push(Number(process.hrtime.bigint() - start) / calls);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(rounds / 2)];
}

function main() {
  const { root, home, cwd, defaultPrompt } = workload();
  try {
    const cfg: PromptCfg = { mode: MODE };
    const options = { home, promptsDir: PROMPTS_DIR };
    const ts = new TsResolver();
    const registry = new PromptRegistry();
    registry.registerDefault(KEY, defaultPrompt);
    registry.loadConfig(
      { name: 'pi-goal-xx', keys: [KEY], promptsDir: PROMPTS_DIR, settingsFile: '.pi/pi-goal-xx-settings.json' },
      { home, cwd },
    );

    const expected = `${defaultPrompt.trimEnd()}\n\nLocal: delegate implementation to a team.`;
    assert.equal(ts.resolve(KEY, cfg, cwd, defaultPrompt.trimEnd(), options).final, expected);
    assert.equal(registry.render(KEY), expected);
    assert.equal(resolvePrompt(KEY, cfg, cwd, defaultPrompt.trimEnd(), options).final, expected);

    const tsNs = measure(() => ts.resolve(KEY, cfg, cwd, defaultPrompt, options).final, 20_000);
    const renderNs = measure(() => registry.render(KEY), 200_000);
    const statelessNs = measure(() => resolvePrompt(KEY, cfg, cwd, defaultPrompt, options).final, 20_000);
    // Where a render's time goes: a call into the binding that returns a
    // boolean, and making a fresh 4 KB JavaScript string from bytes.
    const callNs = measure(() => String(registry.has(KEY)), 200_000);
    const bytes = Buffer.from(expected);
    const stringNs = measure(() => bytes.toString('utf8'), 200_000);

    const row = (name: string, ns: number) =>
      `| ${name.padEnd(48)} | ${ns.toFixed(0).padStart(8)} ns | ${(tsNs / ns).toFixed(1).padStart(6)}x |`;
    console.log(`Node.js ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} cores)`);
    console.log('| per call (median of 7 rounds)                    |     time    | vs TS  |');
    console.log('|--------------------------------------------------|-------------|--------|');
    console.log(row('TypeScript resolver with mtime cache', tsNs));
    console.log(row('registry.render (binding, configuration loaded)', renderNs));
    console.log(row('resolvePrompt (binding, stateless)', statelessNs));
    console.log(row('floor: registry.has (a call into the binding)', callNs));
    console.log(row('floor: a 4 KB string from bytes (Buffer)', stringNs));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
