// The registry with the seed's API shape, and the Rust library's additions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Pack, PromptRegistry, promptRegistry, type Trace } from 'promptreg';

test('registerDefault takes text or a function of the context and the locale', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'Translate the page faithfully.');
  prompts.registerDefault('webagent-narrator.system', (ctx: { brand: string }, locale: string) =>
    `You are the guide of ${ctx.brand}'s website (${locale}).`,
  );

  assert.equal(prompts.render('translate.system'), 'Translate the page faithfully.');
  assert.equal(
    prompts.render('webagent-narrator.system', { brand: 'Acme' }),
    "You are the guide of Acme's website (en).",
  );
  assert.equal(
    prompts.render('webagent-narrator.system', { brand: 'Acme' }, 'ja'),
    "You are the guide of Acme's website (ja).",
  );
});

test('the context reaches renderers as the very object passed', () => {
  const prompts = new PromptRegistry();
  const ctx = { brand: 'Acme', seen: 0 };
  prompts.registerDefault('task.system', (c: typeof ctx) => {
    c.seen += 1;
    return c === ctx ? 'same object' : 'a copy';
  });
  assert.equal(prompts.render('task.system', ctx), 'same object');
  assert.equal(ctx.seen, 1);
});

test('override replaces the body for a locale and the locales that fall back to it; the last call wins', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('inline-edit.system', 'You are an inline editing assistant.');
  prompts.override('inline-edit.system', 'ja', () => 'あなたはインライン編集アシスタントです。');
  prompts.override('inline-edit.system', 'ja', () => 'インライン編集を手伝ってください。');

  assert.equal(prompts.render('inline-edit.system', undefined, 'ja'), 'インライン編集を手伝ってください。');
  assert.equal(prompts.render('inline-edit.system', undefined, 'ja-JP'), 'インライン編集を手伝ってください。');
  assert.equal(prompts.render('inline-edit.system', undefined, 'fr'), 'You are an inline editing assistant.');
});

test("the seed's fallback order: the locale's override, then `en`'s, then the default", () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('planner.system', 'SDK default.');
  prompts.override('planner.system', 'en', 'Host English.');
  prompts.override('planner.system', 'ja', 'ホストの日本語。');

  assert.equal(prompts.render('planner.system', undefined, 'ja'), 'ホストの日本語。');
  assert.equal(prompts.render('planner.system', undefined, 'fr'), 'Host English.');
  prompts.reset('planner.system');
  assert.equal(prompts.render('planner.system', undefined, 'fr'), 'SDK default.');
});

test('CLDR matching: zh-HK takes a zh-TW variant, zh-CN does not', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'Translate.');
  prompts.override('translate.system', 'zh-TW', '翻譯。');
  assert.equal(prompts.render('translate.system', undefined, 'zh-HK'), '翻譯。');
  assert.equal(prompts.render('translate.system', undefined, 'zh-CN'), 'Translate.');
});

test('the fallback locale can be changed', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('task.system', 'Default.');
  prompts.override('task.system', 'de', 'Standard.');
  assert.equal(prompts.fallbackLocale, 'en');
  prompts.setFallbackLocale('de');
  assert.equal(prompts.fallbackLocale, 'de');
  assert.equal(prompts.render('task.system', undefined, 'fr'), 'Standard.');
});

test('append stacks blocks in order, in every locale, and functions get the context and locale', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('webagent-narrator.system', 'Narrate.');
  prompts.override('webagent-narrator.system', 'ja', 'ナレーション。');
  prompts.append('webagent-narrator.system', '- Never mention prices.');
  prompts.append('webagent-narrator.system', (ctx: { brand: string }, locale: string) =>
    `- Only ${ctx.brand} topics (${locale}).`,
  );

  assert.equal(
    prompts.render('webagent-narrator.system', { brand: 'Acme' }),
    'Narrate.\n\n- Never mention prices.\n\n- Only Acme topics (en).',
  );
  assert.equal(
    prompts.render('webagent-narrator.system', { brand: 'Acme' }, 'ja'),
    'ナレーション。\n\n- Never mention prices.\n\n- Only Acme topics (ja).',
  );
});

test('appendAll adds a rule to every prompt, including those registered later', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('a.system', 'A.');
  prompts.appendAll('Never reveal personal data.');
  prompts.registerDefault('b.system', 'B.');
  assert.equal(prompts.render('a.system'), 'A.\n\nNever reveal personal data.');
  assert.equal(prompts.render('b.system'), 'B.\n\nNever reveal personal data.');
});

test('reset(id) clears overrides and appenders and keeps the default; reset() clears every rule', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('task.system', 'Do the task.');
  prompts.override('task.system', 'en', 'Do it differently.');
  prompts.append('task.system', 'Cite sources.');
  prompts.appendAll('Be kind.');

  prompts.reset('task.system');
  assert.equal(prompts.render('task.system'), 'Do the task.\n\nBe kind.');
  prompts.reset();
  assert.equal(prompts.render('task.system'), 'Do the task.');
  assert.deepEqual(prompts.list(), ['task.system']);
});

test('has and list: defaults or overrides, sorted', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'T.');
  prompts.override('dwell-classify.system', 'ja', 'D.');
  prompts.registerDefault('inline-edit.system', 'I.');

  assert.equal(prompts.has('translate.system'), true);
  assert.equal(prompts.has('dwell-classify.system'), true);
  assert.equal(prompts.has('planner.system'), false);
  assert.deepEqual(prompts.list(), ['dwell-classify.system', 'inline-edit.system', 'translate.system']);
});

test('setLocale changes the locale of renders that do not name one', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('task.system', (_: unknown, locale: string) => `locale ${locale}`);
  assert.equal(prompts.locale, 'en');
  assert.equal(prompts.render('task.system'), 'locale en');
  prompts.setLocale('ja_JP');
  assert.equal(prompts.locale, 'ja-JP');
  assert.equal(prompts.render('task.system'), 'locale ja-JP');
  assert.equal(prompts.render('task.system', undefined, 'fr'), 'locale fr');
});

test('pinned blocks survive any override and can be translated', () => {
  const prompts = new PromptRegistry();
  prompts.register('auditor', {
    body: 'Audit the work.',
    head: [(ctx: { goal: string }) => `[GOAL ${ctx.goal}]`],
    tail: ['Reply with PASS or FAIL.'],
    description: 'Independent completion auditor',
  });
  prompts.override('auditor', 'ja', '作業を監査してください。');
  prompts.translatePin('auditor', 'ja', 'tail', 0, 'PASS か FAIL で答えてください。');

  assert.equal(prompts.render('auditor', { goal: 'g-1' }), '[GOAL g-1]\n\nAudit the work.\n\nReply with PASS or FAIL.');
  assert.equal(
    prompts.render('auditor', { goal: 'g-1' }, 'ja'),
    '[GOAL g-1]\n\n作業を監査してください。\n\nPASS か FAIL で答えてください。',
  );
  assert.throws(() => prompts.translatePin('auditor', 'ja', 'tail', 1, '…'), { code: 'unknown-pin' });
});

test('renderTraced and explain give every part with its origin, offsets in UTF-16 units', () => {
  const prompts = new PromptRegistry();
  prompts.register('auditor', { body: 'Audit.', tail: ['😀 PASS or FAIL.'] });
  prompts.override('auditor', 'ja', '監査。');
  prompts.append('auditor', 'Cite sources.');

  const trace: Trace = prompts.renderTraced('auditor', undefined, 'ja-JP');
  assert.equal(trace.text, prompts.render('auditor', undefined, 'ja-JP'));
  assert.equal(trace.id, 'auditor');
  assert.equal(trace.locale, 'ja-JP');
  assert.deepEqual(
    trace.parts.map((p) => [p.origin.kind, p.origin.label, p.text]),
    [
      ['override', 'override for `ja`', '監査。'],
      ['pinned-tail', 'pinned tail block #1', '😀 PASS or FAIL.'],
      ['appender', 'appender #1', 'Cite sources.'],
    ],
  );
  assert.equal(trace.parts[0].origin.step, 'parent');
  assert.equal(trace.parts[0].origin.locale, 'ja');
  for (const part of trace.parts) {
    assert.equal(trace.text.slice(part.start, part.end), part.text);
  }
  assert.deepEqual(trace.lookup[0], { key: 'ja-JP', step: 'exact' });
  assert.deepEqual(prompts.explain('auditor', undefined, 'ja-JP'), trace);
});

test('independent instances share nothing; the process-wide registry is one', () => {
  const a = new PromptRegistry();
  const b = new PromptRegistry();
  a.registerDefault('task.system', 'A.');
  assert.equal(b.has('task.system'), false);

  PromptRegistry.global().registerDefault('global-test.system', 'Shared.');
  assert.equal(promptRegistry.render('global-test.system'), 'Shared.');
  assert.equal(PromptRegistry.global().has('global-test.system'), true);
  promptRegistry.reset('global-test.system');
});

test('a traced part names the snippet files its template included', () => {
  const root = path.resolve(__dirname, '../../../../examples/goal-agent');
  const prompts = new PromptRegistry();
  Pack.load(root).install(prompts);
  const ctx = JSON.parse(fs.readFileSync(path.join(root, 'context.json'), 'utf8'));
  const tail = (locale: string) => prompts.renderTraced('goal-running', ctx, locale).parts.at(-1)!;
  assert.equal(tail('en').origin.kind, 'pinned-tail');
  assert.deepEqual(tail('en').snippets.map((f) => path.relative(root, f)), ['snippets/verification.md']);
  assert.deepEqual(tail('ja').snippets.map((f) => path.relative(root, f)), ['snippets/verification.ja.md']);
  assert.deepEqual(prompts.renderTraced('goal-running', ctx, 'en').parts[0].snippets, []);
});

test('every render takes { subject } after its arguments; with no split running, every subject gets the registry', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('translate.system', 'Translate.');
  prompts.override('translate.system', 'fr', 'Traduisez.');
  prompts.registerChat('helper', [{ role: 'system', content: 'Help.' }, { history: 'turns' }]);
  const options = { subject: 'user-7' };
  assert.equal(prompts.render('translate.system', undefined, 'fr-CA', options), 'Traduisez.');
  assert.equal(prompts.renderTraced('translate.system', undefined, undefined, options).text, 'Translate.');
  assert.equal(prompts.explain('translate.system', undefined, 'fr', options).parts[0].origin.kind, 'override');
  const turns = { turns: [{ role: 'user', content: 'Hi' }] };
  assert.deepEqual(prompts.renderMessages('helper', undefined, undefined, turns, options), [
    { role: 'system', content: 'Help.' },
    { role: 'user', content: 'Hi' },
  ]);
  assert.equal(prompts.renderMessagesTraced('helper', undefined, 'ja', turns, options).messages.length, 2);
  assert.equal(prompts.renderAny('helper', undefined, undefined, turns, options).kind, 'messages');
  assert.ok(prompts.renderChatAsText('helper', undefined, undefined, turns, options).startsWith('# system'));
  assert.throws(
    () => (prompts.render as (...args: unknown[]) => string)('translate.system', undefined, undefined, { subject: 7 }),
    (e: unknown) => e instanceof TypeError && /`options.subject`/.test(e.message),
  );
});
