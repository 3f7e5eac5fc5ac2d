// What the examples of the READMEs (the package's and the repository's
// "Crates and packages" section) say they return, so that it stays true; the examples
// themselves are type-checked and run as written by readme-examples.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { Pack, PromptRegistry, promptRegistry } from 'promptreg';

const goalAgent = path.resolve(__dirname, '../../../../examples/goal-agent');

test("the package README's first example", () => {
  const prompts = promptRegistry;
  prompts.registerDefault('webagent-narrator.system', (ctx: { brand: string }) =>
    `You are the guide of ${ctx.brand}'s website.`);
  prompts.override('webagent-narrator.system', 'ja', (ctx: { brand: string }) =>
    `あなたは${ctx.brand}のウェブサイトの案内役です。`);
  for (const id of prompts.list()) prompts.append(id, 'Never disclose personal data.');

  prompts.setLocale('ja-JP');
  try {
    assert.equal(
      prompts.render('webagent-narrator.system', { brand: 'Acme' }),
      'あなたはAcmeのウェブサイトの案内役です。\n\nNever disclose personal data.',
    );
  } finally {
    prompts.setLocale('en');
    prompts.reset('webagent-narrator.system');
  }
});

test("the repository README's Node.js example", () => {
  const prompts = new PromptRegistry();
  Pack.load(goalAgent).install(prompts);
  prompts.override('auditor', 'ja', (ctx, locale) => `監査してください（${locale}）。`);
  prompts.appendAll('Never disclose personal data.');
  const text = prompts.render('auditor', {}, 'ja-JP');
  assert.ok(text.startsWith('監査してください（ja-JP）。\n\n'), text);
  assert.ok(text.endsWith('\n\nNever disclose personal data.'), text);
});

test("the package README's chat example", () => {
  const prompts = new PromptRegistry();
  prompts.registerChat('narrator', [
    { role: 'system', content: (ctx: { brand: string }) => `You narrate ${ctx.brand}'s pages.` },
    { role: 'user', content: 'Find the tents.' },
    { role: 'assistant', content: 'Opening /tents.' },
    { history: 'conversation' },
  ], { tail: ['Never invent prices.'], model: { model: 'gpt-4o-mini', temperature: 0.3 } });
  prompts.append('narrator', 'Answer in one sentence.');

  const messages = prompts.renderMessages('narrator', { brand: 'Acme' }, 'en', {
    conversation: [{ role: 'user', content: 'And backpacks?' }],
  });
  assert.deepEqual(messages, [
    { role: 'system', content: "You narrate Acme's pages.\n\nNever invent prices.\n\nAnswer in one sentence." },
    { role: 'user', content: 'Find the tents.' },
    { role: 'assistant', content: 'Opening /tents.' },
    { role: 'user', content: 'And backpacks?' },
  ]);
  assert.throws(() => prompts.render('narrator'), { code: 'chat-prompt' });
});
