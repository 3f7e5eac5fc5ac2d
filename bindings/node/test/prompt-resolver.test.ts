// `resolvePrompt(key, cfg, cwd, defaultPrompt, { home, promptsDir })`: a
// suite written from the coding-agent extension's rules (its
// prompt-configuration document: modes, file paths, precedence), of the
// shape of its own `tests/prompt-resolver.test.ts`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { resolvePrompt, resolvePromptBlock, type PromptConfig, type ResolvedPrompt } from 'promptreg';

const PROMPTS_DIR = '.pi/pi-goal-xx/prompts/';
const DEFAULT = 'You are working on an active goal.';
/** The result when nothing is injected: no `injected` property at all. */
const NOTHING = { final: DEFAULT, source: 'none' };

/** A home and a project with optional global and local prompt files. */
function setup(t: { after(fn: () => void): void }, files: { global?: string; local?: string; key?: string } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-resolve-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const cwd = path.join(root, 'project');
  const key = files.key ?? 'goal-running';
  for (const [dir, text] of [
    [home, files.global],
    [cwd, files.local],
  ] as const) {
    fs.mkdirSync(path.join(dir, PROMPTS_DIR), { recursive: true });
    if (text !== undefined) fs.writeFileSync(path.join(dir, PROMPTS_DIR, `${key}.md`), text);
  }
  const resolve = (cfg: PromptConfig | undefined, options: { key?: string; cwd?: string; promptsDir?: string } = {}): ResolvedPrompt =>
    resolvePrompt(options.key ?? key, cfg, options.cwd ?? cwd, DEFAULT, { home, promptsDir: options.promptsDir ?? PROMPTS_DIR });
  return { home, cwd, resolve };
}

describe('nothing configured', () => {
  test('the default alone, source none, nothing injected', (t) => {
    const { resolve } = setup(t);
    const result = resolve(undefined);
    assert.deepEqual({ ...result }, NOTHING);
    assert.equal('injected' in result, false);
    assert.deepEqual(resolve({}), result);
    assert.deepEqual(resolve(null as unknown as undefined), result);
  });
});

describe('inline always wins', () => {
  test('inline beats both files, in every mode including off', (t) => {
    const { resolve } = setup(t, { global: 'Global.', local: 'Local.' });
    for (const mode of ['override', 'append', 'global-local', 'local', 'global-local-merge', 'off'] as const) {
      const result = resolve({ mode, inline: 'Delegate implementation to a team.' });
      assert.equal(result.source, 'inline', mode);
      assert.equal(result.injected, 'Delegate implementation to a team.', mode);
      // Inline text takes the default's place (the library's rule).
      assert.equal(result.final, 'Delegate implementation to a team.', mode);
    }
  });

  test('blank inline text counts as absent; inline is trimmed', (t) => {
    const { resolve } = setup(t, { local: 'Local.' });
    assert.equal(resolve({ inline: '  \n ' }).source, 'local');
    assert.equal(resolve({ inline: '\n  Be brief.  \n' }).injected, 'Be brief.');
  });
});

describe('modes', () => {
  test('global-local (the default): the local file wins over the global one, after the default', (t) => {
    const { resolve } = setup(t, { global: 'Global.', local: 'Local.' });
    for (const cfg of [undefined, {}, { mode: 'global-local' as const }]) {
      assert.deepEqual({ ...resolve(cfg) }, { final: `${DEFAULT}\n\nLocal.`, injected: 'Local.', source: 'local' });
    }
  });

  test('global-local falls back to the global file', (t) => {
    const { resolve } = setup(t, { global: 'Global.' });
    assert.deepEqual({ ...resolve({ mode: 'global-local' }) }, { final: `${DEFAULT}\n\nGlobal.`, injected: 'Global.', source: 'global' });
  });

  test('append: the default, a blank line, then the resolved block', (t) => {
    const { resolve } = setup(t, { global: 'Global.', local: 'Local.' });
    assert.equal(resolve({ mode: 'append' }).final, `${DEFAULT}\n\nLocal.`);
    const globalOnly = setup(t, { global: 'Global.' });
    assert.equal(globalOnly.resolve({ mode: 'append' }).final, `${DEFAULT}\n\nGlobal.`);
  });

  test('override: the block replaces the default', (t) => {
    const { resolve } = setup(t, { global: 'Global.', local: 'Local.' });
    assert.deepEqual({ ...resolve({ mode: 'override' }) }, { final: 'Local.', injected: 'Local.', source: 'local' });
    const globalOnly = setup(t, { global: 'Global.' });
    assert.equal(globalOnly.resolve({ mode: 'override' }).final, 'Global.');
  });

  test('override with no file is the default alone', (t) => {
    const { resolve } = setup(t);
    assert.deepEqual({ ...resolve({ mode: 'override' }) }, NOTHING);
  });

  test('local: only the local file is consulted, the global one never', (t) => {
    const both = setup(t, { global: 'Global.', local: 'Local.' });
    assert.equal(both.resolve({ mode: 'local' }).final, `${DEFAULT}\n\nLocal.`);
    const globalOnly = setup(t, { global: 'Global.' });
    assert.deepEqual({ ...globalOnly.resolve({ mode: 'local' }) }, NOTHING);
  });

  test('global-local-merge: global, a blank line, local when both are present', (t) => {
    const both = setup(t, { global: 'Global.', local: 'Local.' });
    assert.deepEqual({ ...both.resolve({ mode: 'global-local-merge' }) }, {
      final: `${DEFAULT}\n\nGlobal.\n\nLocal.`,
      injected: 'Global.\n\nLocal.',
      source: 'merged',
    });
    const globalOnly = setup(t, { global: 'Global.' });
    assert.equal(globalOnly.resolve({ mode: 'global-local-merge' }).source, 'global');
    const localOnly = setup(t, { local: 'Local.' });
    assert.equal(localOnly.resolve({ mode: 'global-local-merge' }).source, 'local');
  });

  test('off: no injection even if files exist', (t) => {
    const { resolve } = setup(t, { global: 'Global.', local: 'Local.' });
    assert.deepEqual({ ...resolve({ mode: 'off' }) }, NOTHING);
  });
});

describe('files', () => {
  test('files are trimmed and a blank file counts as absent', (t) => {
    const { resolve } = setup(t, { global: '\n\nGlobal.\n\n', local: ' \n\t\n' });
    assert.deepEqual({ ...resolve({}) }, { final: `${DEFAULT}\n\nGlobal.`, injected: 'Global.', source: 'global' });
  });

  test('tool prompts resolve under tool-<name> keys', (t) => {
    const { resolve } = setup(t, { key: 'tool-create-goal', local: 'Always name the goal.' });
    assert.equal(resolve({ mode: 'append' }).final, `${DEFAULT}\n\nAlways name the goal.`);
  });

  test('promptsDir overrides the directory under both home and cwd', (t) => {
    const { home, cwd, resolve } = setup(t);
    fs.mkdirSync(path.join(cwd, 'custom'), { recursive: true });
    fs.writeFileSync(path.join(cwd, 'custom/auditor.md'), 'Custom local.');
    fs.mkdirSync(path.join(home, 'custom'), { recursive: true });
    fs.writeFileSync(path.join(home, 'custom/auditor.md'), 'Custom global.');
    assert.equal(resolve({}, { key: 'auditor', promptsDir: 'custom' }).injected, 'Custom local.');
    assert.equal(resolve({ mode: 'override' }, { key: 'auditor', promptsDir: 'custom', cwd: '' }).final, 'Custom global.');
  });

  test('the file setting names the block, relative to cwd; a missing one falls through', (t) => {
    const { cwd, resolve } = setup(t, { global: 'Global.' });
    fs.writeFileSync(path.join(cwd, 'rules.md'), 'From the named file.');
    assert.deepEqual({ ...resolve({ file: 'rules.md' }) }, { final: `${DEFAULT}\n\nFrom the named file.`, injected: 'From the named file.', source: 'local' });
    assert.equal(resolve({ file: 'missing.md' }).source, 'global');
  });

  test('texts pass through byte for byte', (t) => {
    const text = 'Réponds en français — 日本語も OK 😀';
    const { resolve } = setup(t, { local: text });
    assert.equal(resolve({ mode: 'override' }).final, text);
  });
});

describe('the block alone', () => {
  test('resolvePromptBlock is the block resolvePrompt puts with the default', (t) => {
    const { home, cwd, resolve } = setup(t, { local: 'Local.\n' });
    const options = { home, promptsDir: PROMPTS_DIR };
    for (const mode of ['override', 'append', 'global-local', 'local', 'global-local-merge'] as const) {
      const block = resolvePromptBlock('goal-running', { mode }, cwd, options);
      assert.deepEqual({ ...block }, { text: 'Local.', source: 'local', replacesDefault: mode === 'override' }, mode);
      assert.equal(resolve({ mode }).final, mode === 'override' ? 'Local.' : `${DEFAULT}\n\nLocal.`, mode);
    }
    const inline = resolvePromptBlock('goal-running', { mode: 'append', inline: ' Inline. ' }, cwd, options);
    assert.deepEqual({ ...inline }, { text: 'Inline.', source: 'inline', replacesDefault: true });
    assert.equal(resolvePromptBlock('goal-running', { mode: 'off' }, cwd, options), null);
    assert.equal(resolvePromptBlock('other-key', undefined, cwd, options), null);
  });
});

describe('bad input', () => {
  test('an unknown mode is an error listing the valid ones', (t) => {
    const { resolve } = setup(t);
    assert.throws(() => resolve({ mode: 'apend' as any }), (e: any) => {
      assert.equal(e.code, 'config');
      assert.match(e.message, /invalid mode `apend`; valid modes are `override`, `append`/);
      return true;
    });
  });

  test('a key that is not a valid id (it would become a path) is an error', (t) => {
    const { resolve } = setup(t);
    assert.throws(() => resolve({}, { key: '../secrets' }), { code: 'invalid-id' });
  });

  test('arguments of the wrong type are TypeErrors naming them', (t) => {
    const { home } = setup(t);
    const call = resolvePrompt as (...args: unknown[]) => unknown;
    const typeError = (name: string) => (e: any) => e instanceof TypeError && e.message.includes('`' + name + '`');
    assert.throws(() => call(1, {}, '', DEFAULT, { home, promptsDir: PROMPTS_DIR }), typeError('key'));
    assert.throws(() => call('auditor', 'append', '', DEFAULT, { home, promptsDir: PROMPTS_DIR }), typeError('cfg'));
    assert.throws(() => call('auditor', { mode: 3 }, '', DEFAULT, { home, promptsDir: PROMPTS_DIR }), typeError('cfg'));
    assert.throws(() => call('auditor', {}, null, DEFAULT, { home, promptsDir: PROMPTS_DIR }), typeError('cwd'));
    assert.throws(() => call('auditor', {}, '', 42, { home, promptsDir: PROMPTS_DIR }), typeError('defaultPrompt'));
    assert.throws(() => call('auditor', {}, '', DEFAULT, { home }), typeError('options'));
    assert.throws(() => call('auditor', {}, '', null, { home, promptsDir: PROMPTS_DIR }), typeError('defaultPrompt'));
    const block = resolvePromptBlock as (...args: unknown[]) => unknown;
    assert.throws(() => block(1, {}, '', { home, promptsDir: PROMPTS_DIR }), typeError('key'));
    assert.throws(() => block('auditor', {}, '', DEFAULT), typeError('options'));
  });
});
