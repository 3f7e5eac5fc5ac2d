// Chat prompts: messages with roles declared from JavaScript or in a pack,
// rendered as `{ role, content }[]` with histories inserted at their
// placeholders; `render` refuses them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Pack, PromptRegistry, type ChatMessage } from 'promptreg';
import { typeErrorNaming, untyped } from './support';

const webAgent = path.resolve(__dirname, '../../../../examples/web-agent');

function narrator() {
  const prompts = new PromptRegistry();
  prompts.registerChat(
    'narrator',
    [
      { role: 'system', content: (ctx: { brand: string }, locale: string) => `You narrate ${ctx.brand}'s pages (${locale}).` },
      { role: 'user', content: 'Find the tents.' },
      { role: 'assistant', content: 'Opening /tents.' },
      { history: 'conversation' },
      { role: 'critic', content: 'Check the answer.' },
    ],
    { tail: ['Never invent prices.'], description: 'The narrator', model: { model: 'gpt-4o-mini', temperature: 0.3 } },
  );
  prompts.append('narrator', 'Answer in one sentence.');
  return prompts;
}

test('registerChat and renderMessages: roles, renderer functions, rules on the system message, a history inserted', () => {
  const prompts = narrator();
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'And backpacks?' },
    { role: 'assistant', content: 'Opening /backpacks.' },
  ];
  const messages = prompts.renderMessages('narrator', { brand: 'Acme' }, 'ja', { conversation });
  assert.deepEqual(messages, [
    { role: 'system', content: "You narrate Acme's pages (ja).\n\nNever invent prices.\n\nAnswer in one sentence." },
    { role: 'user', content: 'Find the tents.' },
    { role: 'assistant', content: 'Opening /tents.' },
    { role: 'user', content: 'And backpacks?' },
    { role: 'assistant', content: 'Opening /backpacks.' },
    { role: 'critic', content: 'Check the answer.' },
  ]);
  // No history: the placeholder inserts nothing; the registry's locale by default.
  assert.deepEqual(
    prompts.renderMessages('narrator', { brand: 'Acme' }).map((m) => m.role),
    ['system', 'user', 'assistant', 'critic'],
  );
  assert.equal(prompts.isChat('narrator'), true);
  assert.deepEqual(prompts.modelSettings('narrator'), { model: 'gpt-4o-mini', temperature: 0.3 });
  assert.equal(
    prompts.renderChatAsText('narrator', { brand: 'Acme' }),
    "# system\nYou narrate Acme's pages (en).\n\nNever invent prices.\n\nAnswer in one sentence.\n\n# user\nFind the tents.\n\n# assistant\nOpening /tents.\n\n# critic\nCheck the answer.",
  );
});

test('overrideChat replaces the whole list for a locale; a text prompt renders as one system message', () => {
  const prompts = narrator();
  prompts.overrideChat('narrator', 'ja', [{ role: 'system', content: 'ページを案内します。' }, { history: 'conversation' }]);
  assert.deepEqual(prompts.renderMessages('narrator', { brand: 'Acme' }, 'ja-JP', { conversation: [{ role: 'user', content: 'テント？' }] }), [
    { role: 'system', content: 'ページを案内します。\n\nNever invent prices.\n\nAnswer in one sentence.' },
    { role: 'user', content: 'テント？' },
  ]);
  assert.equal(prompts.renderMessages('narrator', { brand: 'Acme' }, 'fr').length, 4);

  prompts.registerDefault('translate.system', 'Translate the page.');
  assert.equal(prompts.isChat('translate.system'), false);
  assert.deepEqual(prompts.renderMessages('translate.system'), [{ role: 'system', content: 'Translate the page.' }]);
});

test('render of a chat prompt throws with code chat-prompt, naming the methods that render it', () => {
  const prompts = narrator();
  for (const call of [() => prompts.render('narrator', { brand: 'Acme' }), () => prompts.renderTraced('narrator', { brand: 'Acme' })]) {
    assert.throws(call, (e: any) => {
      assert.ok(!(e instanceof TypeError));
      assert.equal(e.code, 'chat-prompt');
      assert.equal(e.id, 'narrator');
      assert.match(e.message, /`renderMessages`/);
      assert.match(e.message, /`renderChatAsText`/);
      return true;
    });
  }
});

test('renderMessagesTraced gives each message its parts and source, and the model settings', () => {
  const prompts = narrator();
  const trace = prompts.renderMessagesTraced('narrator', { brand: 'Acme' }, 'en', {
    conversation: [{ role: 'user', content: 'And backpacks? 🎒' }],
  });
  assert.equal(trace.id, 'narrator');
  assert.equal(trace.locale, 'en');
  assert.deepEqual(trace.model, { model: 'gpt-4o-mini', temperature: 0.3 });
  assert.deepEqual(
    trace.messages.map((m) => [m.role, m.source.kind, m.source.index, m.source.name ?? null]),
    [
      ['system', 'prompt', 0, null],
      ['user', 'prompt', 1, null],
      ['assistant', 'prompt', 2, null],
      ['user', 'history', 0, 'conversation'],
      ['critic', 'prompt', 3, null],
    ],
  );
  const system = trace.messages[0];
  assert.deepEqual(system.parts.map((p) => p.origin.kind), ['default', 'pinned-tail', 'appender']);
  for (const part of system.parts) {
    assert.equal(system.content.slice(part.start, part.end), part.text);
  }
  assert.deepEqual(trace.messages[3].parts, []);
});

test("a pack's chat prompt (kind: chat) renders through renderMessages with its history, per locale", () => {
  const prompts = new PromptRegistry();
  Pack.load(webAgent).install(prompts);
  const ctx = JSON.parse(fs.readFileSync(path.join(webAgent, 'context.json'), 'utf8'));
  const histories = JSON.parse(fs.readFileSync(path.join(webAgent, 'history.json'), 'utf8'));
  const id = 'webagent-narrator.system';

  assert.equal(prompts.isChat(id), true);
  const messages = prompts.renderMessages(id, ctx, 'en', histories);
  assert.deepEqual(messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
  assert.ok(messages[0].content.startsWith('You are the friendly assistant of Acme Outdoor (https://shop.acme.example)'), messages[0].content);
  assert.ok(messages[0].content.endsWith('Never invent prices, stock levels or policies; read them from the page or say you do not know.'));
  assert.deepEqual(messages[3], { role: 'user', content: 'Do you have tents for four people?' });

  const ja = prompts.renderMessages(id, ctx, 'ja-JP', histories);
  assert.equal(ja.length, 4);
  assert.notEqual(ja[0].content, messages[0].content);
  assert.equal(prompts.renderMessagesTraced(id, ctx, 'en').model?.model, 'gpt-4o-mini');
  assert.throws(() => prompts.render(id, ctx), { code: 'chat-prompt' });
});

test('histories must name placeholders of the prompt: invalid-chat with a suggestion', () => {
  const prompts = narrator();
  assert.throws(
    () => prompts.renderMessages('narrator', { brand: 'Acme' }, undefined, { conversaton: [] }),
    (e: any) => {
      assert.equal(e.code, 'invalid-chat');
      assert.equal(e.suggestion, 'did you mean `conversation`?');
      return true;
    },
  );
  assert.throws(() => prompts.registerChat('empty', []), { code: 'invalid-chat' });
  assert.throws(() => prompts.registerChat('far', [{ role: 'user', content: 'Hi.' }], { attach: 3 }), { code: 'invalid-chat' });
  assert.equal(prompts.has('empty'), false);
});

test('bad argument types are TypeErrors naming the argument', () => {
  const prompts = new PromptRegistry();
  const register = prompts.registerChat.bind(prompts);
  assert.throws(() => untyped(register, 'chat', [{ role: 3, content: 'Hi.' }]), typeErrorNaming('messages[0].role'));
  assert.throws(() => untyped(register, 'chat', 'system: Hi.'), typeErrorNaming('messages'));
  assert.throws(() => untyped(register, 'chat', { role: 'system', content: 'Hi.' }), typeErrorNaming('messages'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'system', content: 7 }]), typeErrorNaming('messages[0].content'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'system' }]), typeErrorNaming('messages[0].content'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'user', content: 'a' }, 'b']), typeErrorNaming('messages[1]'));
  assert.throws(() => untyped(register, 'chat', [{ history: 5 }]), typeErrorNaming('messages[0].history'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'user', content: 'a', history: 'h' }]), typeErrorNaming('messages[0]'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'user', content: 'a' }], { tail: [1] }), typeErrorNaming('options.tail[0]'));
  assert.throws(() => untyped(register, 'chat', [{ role: 'user', content: 'a' }], { model: 'gpt' }), typeErrorNaming('options.model'));
  assert.throws(() => untyped(register, 42, [{ role: 'user', content: 'a' }]), typeErrorNaming('id'));
  assert.equal(prompts.has('chat'), false);

  prompts.registerChat('chat', [{ role: 'user', content: 'Hi.' }, { history: 'h' }]);
  const render = prompts.renderMessages.bind(prompts);
  assert.throws(() => untyped(render, 'chat', undefined, undefined, [[]]), typeErrorNaming('histories'));
  assert.throws(() => untyped(render, 'chat', undefined, undefined, { h: 'text' }), typeErrorNaming('histories.h'));
  assert.throws(() => untyped(render, 'chat', undefined, undefined, { h: [{ role: 1, content: 'x' }] }), typeErrorNaming('histories.h[0].role'));
  assert.throws(() => untyped(prompts.overrideChat.bind(prompts), 'chat', 'ja', null), typeErrorNaming('messages'));
  assert.throws(() => untyped(prompts.isChat.bind(prompts), 'chat', 3), typeErrorNaming('locale'));
});

test('a renderer function of a message that throws is an error naming the prompt, with the cause', () => {
  const prompts = new PromptRegistry();
  const boom = new Error('boom');
  prompts.registerChat('chat', [{ role: 'system', content: 'Fine.' }, { role: 'user', content: () => { throw boom; } }]);
  assert.throws(() => prompts.renderMessages('chat'), (e: any) => {
    assert.equal(e.code, 'renderer-panicked');
    assert.match(e.message, /`chat`/);
    assert.equal(e.cause, boom);
    return true;
  });
  // The registry stays usable.
  prompts.overrideChat('chat', 'ja', [{ role: 'system', content: 'はい。' }]);
  assert.deepEqual(prompts.renderMessages('chat', undefined, 'ja'), [{ role: 'system', content: 'はい。' }]);
});

test('a history given to a text prompt is refused, as the tool and the server refuse it', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('plain', 'Be brief.');
  assert.deepEqual(prompts.renderMessages('plain'), [{ role: 'system', content: 'Be brief.' }]);
  assert.throws(
    () => prompts.renderMessages('plain', {}, 'en', { conversation: [{ role: 'user', content: 'Hi' }] }),
    (e: unknown) => {
      assert.match((e as Error).message, /has no history placeholder `conversation`/);
      return true;
    },
  );
});

test('renderAny renders any prompt as what it is, and refuses a history given to a text prompt', () => {
  const prompts = narrator();
  prompts.registerDefault('plain', 'Be brief.');
  const conversation: ChatMessage[] = [{ role: 'user', content: 'And the stoves?' }];

  const chat = prompts.renderAny('narrator', { brand: 'Acme' }, 'en', { conversation });
  assert.equal(chat.kind, 'messages');
  assert.equal(chat.text, undefined);
  assert.deepEqual(chat.messages, prompts.renderMessages('narrator', { brand: 'Acme' }, 'en', { conversation }));

  assert.deepEqual(prompts.renderAny('plain'), { kind: 'text', text: 'Be brief.' });
  for (const histories of [{ conversation }, { conversation: [] }]) {
    assert.throws(
      () => prompts.renderAny('plain', {}, 'en', histories),
      (e: unknown) => {
        assert.equal((e as { code?: string }).code, 'invalid-chat');
        assert.match((e as Error).message, /prompt `plain` has no history placeholder `conversation`/);
        return true;
      },
    );
  }
});
