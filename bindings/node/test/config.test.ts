// Packs and the user's configuration: load, install, loadConfig, reload,
// check with diagnostics as objects, and watch. Every test has its own
// home and project folders; none touches the real home.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Pack,
  PromptRegistry,
  check,
  checkSettings,
  type ConfigSpec,
  type Diagnostic,
  type ReloadEvent,
} from 'promptreg';

const goalAgent = path.resolve(__dirname, '../../../../examples/goal-agent');
const context = JSON.parse(fs.readFileSync(path.join(goalAgent, 'context.json'), 'utf8'));

/** A home and a project folder, removed after the test. */
function sandbox(t: { after(fn: () => void): void }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-node-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(project);
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };
  return { home, project, write };
}

const appSpec: ConfigSpec = {
  name: 'app',
  keys: ['auditor'],
  keyPatterns: ['tool-*'],
  promptsDir: '.app/prompts',
  settingsFile: '.app/settings.json',
  legacyAliases: { auditorPrompt: 'prompts.auditor.inline' },
};

function appRegistry() {
  const registry = new PromptRegistry();
  registry.register('auditor', { body: 'Audit the work.', tail: ['Answer PASS or FAIL.'] });
  return registry;
}

test('a pack loads, installs and renders its templates with a JavaScript context', () => {
  const pack = Pack.load(goalAgent);
  assert.equal(pack.name, 'goal-agent');
  assert.ok(pack.ids.includes('goal-running'));
  assert.deepEqual(Pack.check(goalAgent).filter((d) => d.severity === 'error'), []);

  const registry = new PromptRegistry();
  pack.install(registry);
  assert.deepEqual(registry.list(), [...pack.ids].sort());
  const text = registry.render('goal-running', context);
  assert.ok(text.startsWith('[PI GOAL ACTIVE goalId=g-42]\nObjective: Add CSV export to the reports page'), text);
  assert.ok(text.endsWith('Report the command you ran and its result.'), text);

  // A missing template variable is an error naming the prompt.
  assert.throws(() => registry.render('goal-running', {}), (e: any) => {
    assert.equal(e.code, 'template');
    assert.match(e.message, /goal-running/);
    return true;
  });
});

test('installing a pack into something that is no registry is a TypeError', () => {
  const pack = Pack.load(goalAgent);
  assert.throws(() => (pack.install as any)({}), (e: any) => e instanceof TypeError && /`registry` must be a PromptRegistry, not object/.test(e.message));
  assert.throws(() => (pack.install as any)(pack), (e: any) => e instanceof TypeError && /`registry`/.test(e.message));
});

test('a folder that is no pack is an error with its diagnostics', (t) => {
  const { home } = sandbox(t);
  assert.throws(() => Pack.load(home), (e: any) => {
    assert.equal(e.code, 'config');
    assert.ok(Array.isArray(e.diagnostics) && e.diagnostics.length > 0);
    assert.match(e.diagnostics[0].file, /promptreg\.toml/);
    return true;
  });
});

test("the user's files and settings apply after loadConfig; pinned blocks stay", (t) => {
  const { home, project, write } = sandbox(t);
  write(path.join(project, '.app/prompts/auditor.md'), 'Reject work without tests.\n');
  write(path.join(project, '.app/settings.json'), '{\n  // JSON with comments.\n  "prompts": { "auditor": { "mode": "override" } },\n}\n');
  const registry = appRegistry();

  const report = registry.loadConfig(appSpec, { home, cwd: project });
  assert.deepEqual(report, { changed: ['auditor'], warnings: [] });
  assert.equal(registry.render('auditor'), 'Reject work without tests.\n\nAnswer PASS or FAIL.');

  const user = registry.renderTraced('auditor').parts[0];
  assert.equal(user.origin.kind, 'user');
  assert.equal(user.origin.replacesBody, true);
  assert.equal(user.provenance?.source, 'user');
  assert.equal(user.provenance?.mode, 'override');
  assert.equal(user.provenance?.file, path.join(project, '.app/prompts/auditor.md'));
  assert.equal(user.provenance?.chosenBy?.keyPath, 'prompts.auditor');
  assert.equal(user.provenance?.chosenBy?.line, 3);

  registry.unloadConfig();
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nAnswer PASS or FAIL.');
});

test('a pack declares the configuration its users may write', (t) => {
  const { home, project, write } = sandbox(t);
  write(path.join(project, '.pi/pi-goal-xx/prompts/goal-running.md'), 'Delegate implementation to a team.');
  write(path.join(project, '.pi/pi-goal-xx-settings.json'), '{ "prompts": { "goal-running": { "mode": "override" } } }');
  const pack = Pack.load(goalAgent);
  const spec = pack.configSpec();
  assert.equal(spec.promptsDir, '.pi/pi-goal-xx/prompts/');
  assert.deepEqual(spec.keyPatterns, ['tool-*']);
  assert.equal(spec.legacyAliases?.auditorPrompt, 'prompts.auditor.inline');

  const registry = new PromptRegistry();
  pack.install(registry);
  registry.loadConfig(spec, { home, cwd: project });
  const text = registry.render('goal-running', context);
  assert.ok(text.includes('\n\nDelegate implementation to a team.\n\nVerification contract:'), text);
  assert.ok(!text.includes('You are working on an active goal.'), text);
});

test('reload reads the files again; a broken file throws its diagnostics and keeps the last good state', (t) => {
  const { home, project, write } = sandbox(t);
  const prompt = path.join(project, '.app/prompts/auditor.md');
  const settings = path.join(project, '.app/settings.json');
  write(prompt, 'First rule.');
  const registry = appRegistry();
  registry.loadConfig(appSpec, { home, cwd: project });
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nFirst rule.\n\nAnswer PASS or FAIL.');

  write(prompt, 'Second rule.');
  assert.deepEqual(registry.reload().changed, ['auditor']);
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL.');

  write(settings, '{\n  "prompts": {\n    "auditor": { "mode": "apend" }\n  }\n}\n');
  write(prompt, 'Third rule.');
  assert.throws(() => registry.reload(), (e: any) => {
    assert.equal(e.code, 'config');
    const [d] = e.diagnostics as Diagnostic[];
    assert.deepEqual(
      { ...d, message: undefined },
      {
        severity: 'error',
        code: 'invalid-mode',
        message: undefined,
        file: settings,
        line: 3,
        column: 26,
        keyPath: 'prompts.auditor.mode',
        suggestion: 'did you mean `append`?',
      },
    );
    assert.match(d.message, /invalid mode `apend`/);
    return true;
  });
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL.');
});

test('reload without a configuration is an error', () => {
  assert.throws(() => new PromptRegistry().reload(), { code: 'not-loaded' });
});

test('check reports every problem as an object, without loading', (t) => {
  const { home, project, write } = sandbox(t);
  write(path.join(project, '.app/prompts/auditr.md'), 'Typo in the name.');
  write(path.join(project, '.app/settings.json'), '{ "prompts": { "auditor": { "mode": "override", "inline": "x" } } }');

  const diagnostics = check(appSpec, { home, cwd: project });
  const codes = diagnostics.map((d) => [d.severity, d.code]);
  assert.deepEqual(codes, [
    ['warning', 'unknown-prompt-file'],
  ]);
  assert.equal(diagnostics[0].suggestion, 'did you mean `auditor.md`?');
  assert.equal(diagnostics[0].file, path.join(project, '.app/prompts/auditr.md'));

  const inBuffer = checkSettings(appSpec, 'settings.json', '{ "prompts": { "auditr": {} } }');
  assert.equal(inBuffer[0].code, 'unknown-prompt-key');
  assert.equal(inBuffer[0].keyPath, 'prompts.auditr');
  assert.equal(inBuffer[0].line, 1);
  assert.equal(inBuffer[0].column, 16);
  assert.equal(inBuffer[0].suggestion, 'did you mean `auditor`?');
});

test('a spec that does not declare a prompts folder is an error; a spec of the wrong type a TypeError', (t) => {
  const { home } = sandbox(t);
  const registry = new PromptRegistry();
  assert.throws(() => registry.loadConfig({ name: 'app', keys: ['auditor'] }, { home }), { code: 'config' });
  assert.throws(() => (registry.loadConfig as any)('app', { home }), (e: any) => e instanceof TypeError && /`spec`/.test(e.message));
  assert.throws(() => (registry.loadConfig as any)({ name: 3 }, { home }), (e: any) => e instanceof TypeError && /`spec` is invalid/.test(e.message));
  assert.throws(() => (registry.loadConfig as any)(appSpec, { cwd: home }), (e: any) => e instanceof TypeError && /`options`/.test(e.message));
});

test('watch reloads when a file changes and reports failures, on the JavaScript thread', async (t) => {
  const { home, project, write } = sandbox(t);
  const prompt = path.join(project, '.app/prompts/auditor.md');
  const settings = path.join(project, '.app/settings.json');
  write(prompt, 'First rule.');
  write(settings, '{}');
  const registry = appRegistry();
  registry.loadConfig(appSpec, { home, cwd: project });

  const events: ReloadEvent[] = [];
  let wake: () => void = () => {};
  const watcher = registry.watch(
    (event) => {
      events.push(event);
      wake();
    },
    { debounceMs: 20 },
  );
  t.after(() => watcher.close());
  const next = async (change: () => void) => {
    const seen = events.length;
    change();
    while (events.length === seen) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    return events[events.length - 1];
  };

  assert.equal(watcher.isOpen, true);
  const reloaded = await next(() => write(prompt, 'Second rule.'));
  assert.equal(reloaded.kind, 'reloaded');
  assert.deepEqual(reloaded.report?.changed, ['auditor']);
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL.');

  const failed = await next(() => write(settings, '{ "prompts": { "auditor": { "mode": 1 } } }'));
  assert.equal(failed.kind, 'failed');
  assert.equal(failed.error?.code, 'config');
  assert.equal(failed.error?.diagnostics[0].keyPath, 'prompts.auditor.mode');
  assert.equal(registry.render('auditor'), 'Audit the work.\n\nSecond rule.\n\nAnswer PASS or FAIL.');

  watcher.close();
  assert.equal(watcher.isOpen, false);
  watcher.close();
});

test('watch needs something to follow and a function', () => {
  const registry = new PromptRegistry();
  assert.throws(() => registry.watch(() => {}), { code: 'not-loaded' });
  assert.throws(() => (registry.watch as any)('callback'), (e: any) => e instanceof TypeError && /`callback`/.test(e.message));
});

test('a part from a stale translation says so in its provenance', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-stale-'));
  try {
    fs.mkdirSync(path.join(dir, 'defaults'));
    fs.writeFileSync(path.join(dir, 'promptreg.toml'), 'name = "t"\nkeys = ["greeting"]\n[user]\nprompts_dir = ".t"\n');
    fs.writeFileSync(path.join(dir, 'defaults/greeting.md'), 'Hello, world!\n');
    fs.writeFileSync(
      path.join(dir, 'defaults/greeting.ja.md'),
      '---\ntranslated_from:\n  digest: "0000000000000000"\n  body: Hello!\n---\nこんにちは！\n',
    );
    const prompts = new PromptRegistry();
    Pack.load(dir).install(prompts);
    const [ja] = prompts.renderTraced('greeting', undefined, 'ja').parts;
    assert.equal(ja.provenance?.stale, true);
    const [en] = prompts.renderTraced('greeting').parts;
    assert.equal(en.provenance?.stale, false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
