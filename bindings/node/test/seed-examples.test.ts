// The web-agent SDK's documented examples (prompt-registry, "常見模式"),
// run through the package with only the import changed: `dddk.prompts` is
// a registry and `dddk.setLocale` its `setLocale`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { PromptRegistry } from 'promptreg';

interface AssemblePromptInput {
  brand: string;
  persona: string;
}

/** What `autoInstall()` gives: the subsystems' defaults registered. */
function autoInstall() {
  const prompts = new PromptRegistry();
  prompts.registerDefault('inline-edit.system', 'You are an inline editing assistant.');
  prompts.registerDefault('translate.system', 'Translate the page faithfully.');
  prompts.registerDefault('planner.system', 'Write an execution plan for the WebAgent.');
  prompts.registerDefault(
    'webagent-narrator.system',
    (ctx: AssemblePromptInput) => `You are ${ctx.persona}, the guide of ${ctx.brand}.`,
  );
  return { prompts, setLocale: (locale: string) => prompts.setLocale(locale) };
}

const ctx: AssemblePromptInput = { brand: 'Acme', persona: 'Ada' };

test('multi-locale launch: ja, es and fr overrides; en and zh-TW keep the SDK default', () => {
  const dddk = autoInstall();
  const NARRATOR_JA = (c: AssemblePromptInput) => `あなたは${c.brand}の案内役${c.persona}です。`;
  const NARRATOR_ES = (c: AssemblePromptInput) => `Eres ${c.persona}, guía de ${c.brand}.`;
  const NARRATOR_FR = (c: AssemblePromptInput) => `Vous êtes ${c.persona}, guide de ${c.brand}.`;

  dddk.prompts.override('webagent-narrator.system', 'ja', NARRATOR_JA);
  dddk.prompts.override('webagent-narrator.system', 'es', NARRATOR_ES);
  dddk.prompts.override('webagent-narrator.system', 'fr', NARRATOR_FR);

  const render = (locale: string) => dddk.prompts.render('webagent-narrator.system', ctx, locale);
  assert.equal(render('ja'), 'あなたはAcmeの案内役Adaです。');
  assert.equal(render('es'), 'Eres Ada, guía de Acme.');
  assert.equal(render('es-MX'), 'Eres Ada, guía de Acme.');
  assert.equal(render('fr'), 'Vous êtes Ada, guide de Acme.');
  assert.equal(render('en'), 'You are Ada, the guide of Acme.');
  assert.equal(render('zh-TW'), 'You are Ada, the guide of Acme.');
});

test('compliance layer: one appender on every prompt from list(), base prompts untouched', () => {
  const dddk = autoInstall();
  const compliance = () => `
合規需求：
- 絕不揭露使用者個資。
- 拒絕撰寫法律或醫療意見。
- 被問到價格時，回：「請聯絡 sales@acme.com。」
`;

  for (const id of dddk.prompts.list()) {
    dddk.prompts.append(id, compliance);
  }

  const rule = '合規需求：\n- 絕不揭露使用者個資。\n- 拒絕撰寫法律或醫療意見。\n- 被問到價格時，回：「請聯絡 sales@acme.com。」';
  assert.equal(dddk.prompts.render('translate.system'), `Translate the page faithfully.\n\n${rule}`);
  assert.equal(
    dddk.prompts.render('webagent-narrator.system', ctx, 'ja'),
    `You are Ada, the guide of Acme.\n\n${rule}`,
  );
  for (const id of dddk.prompts.list()) {
    assert.ok(dddk.prompts.render(id, ctx).endsWith(rule), id);
  }
});

test('switching the locale at runtime: the next render uses the new locale, nothing re-registered', () => {
  const dddk = autoInstall();
  dddk.prompts.override('inline-edit.system', 'ja', () => 'あなたはインライン編集アシスタントです。');
  const picker = new EventTarget();
  picker.addEventListener('change', (e) => {
    const locale = (e as CustomEvent<string>).detail;
    dddk.setLocale(locale);
  });

  assert.equal(dddk.prompts.render('inline-edit.system'), 'You are an inline editing assistant.');
  picker.dispatchEvent(new CustomEvent('change', { detail: 'ja' }));
  assert.equal(dddk.prompts.render('inline-edit.system'), 'あなたはインライン編集アシスタントです。');
  picker.dispatchEvent(new CustomEvent('change', { detail: 'en' }));
  assert.equal(dddk.prompts.render('inline-edit.system'), 'You are an inline editing assistant.');
});

test('reset(id) goes back to the SDK default: overrides and appenders cleared, default kept', () => {
  const dddk = autoInstall();
  dddk.prompts.override('inline-edit.system', 'ja', () => '日本語。');
  dddk.prompts.append('inline-edit.system', () => 'Never change the tone.');

  dddk.prompts.reset('inline-edit.system');
  assert.equal(dddk.prompts.render('inline-edit.system', undefined, 'ja'), 'You are an inline editing assistant.');
  assert.equal(dddk.prompts.has('inline-edit.system'), true);
});
