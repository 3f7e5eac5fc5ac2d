// Wrong argument types are TypeErrors naming the argument; invalid ids and
// locales are errors as in Rust; a renderer that throws, returns a
// non-string or calls back into the registry neither crashes nor
// deadlocks, and the registry stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { PromptRegistry } from 'promptreg';
import { typeErrorNaming, untyped } from './support';

test('a number as an id is a TypeError naming `id`', () => {
  const prompts = new PromptRegistry();
  assert.throws(() => untyped(prompts.registerDefault.bind(prompts), 42, 'text'), typeErrorNaming('id'));
  assert.throws(() => untyped(prompts.render.bind(prompts), 42), typeErrorNaming('id'));
  assert.throws(() => untyped(prompts.has.bind(prompts), 42), typeErrorNaming('id'));
  assert.throws(() => untyped(prompts.reset.bind(prompts), 42), typeErrorNaming('id'));
  assert.throws(() => untyped(prompts.registerDefault.bind(prompts), 42, 'text'), /`id` must be a string, not number/);
});

test('an object as a locale is a TypeError naming `locale`', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('task.system', 'Do it.');
  assert.throws(() => untyped(prompts.setLocale.bind(prompts), { tag: 'ja' }), typeErrorNaming('locale'));
  assert.throws(() => untyped(prompts.override.bind(prompts), 'task.system', {}, 'x'), typeErrorNaming('locale'));
  assert.throws(() => untyped(prompts.render.bind(prompts), 'task.system', {}, {}), typeErrorNaming('locale'));
  assert.equal(prompts.locale, 'en');
});

test('a renderer that is neither text nor a function is a TypeError naming the argument', () => {
  const prompts = new PromptRegistry();
  assert.throws(() => untyped(prompts.registerDefault.bind(prompts), 'task.system', 7), typeErrorNaming('render'));
  assert.throws(() => untyped(prompts.append.bind(prompts), 'task.system', null), typeErrorNaming('extra'));
  assert.throws(() => untyped(prompts.appendAll.bind(prompts), {}), typeErrorNaming('extra'));
  assert.throws(
    () => untyped(prompts.register.bind(prompts), 'auditor', { body: 'A.', tail: ['ok', 3] }),
    typeErrorNaming('declaration.tail[1]'),
  );
  assert.throws(() => untyped(prompts.register.bind(prompts), 'auditor', 'A.'), typeErrorNaming('declaration'));
  assert.equal(prompts.has('task.system'), false);
  assert.equal(prompts.has('auditor'), false);
});

test('a renderer that returns a non-string is a TypeError naming the id and the part', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('task.system', 'Do it.');
  prompts.override('task.system', 'ja', () => 42 as unknown as string);
  prompts.append('task.system', () => undefined as unknown as string);

  assert.throws(
    () => prompts.render('task.system', undefined, 'ja'),
    (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /the override for `ja` of prompt `task\.system` failed while rendering for `ja`: it returned number; a renderer must return a string/);
      return true;
    },
  );
  assert.throws(() => prompts.render('task.system'), /the appender #1 of prompt `task\.system`.*it returned undefined/);
});

test('invalid ids and locales are errors with the library code', () => {
  const prompts = new PromptRegistry();
  assert.throws(() => prompts.registerDefault('Bad Id!', 'x'), (e: any) => {
    assert.ok(!(e instanceof TypeError));
    assert.equal(e.code, 'invalid-id');
    assert.match(e.message, /Bad Id!/);
    return true;
  });
  assert.throws(() => prompts.setLocale('not a locale!'), { code: 'invalid-locale' });
  prompts.registerDefault('planner.system', 'Plan.');
  assert.throws(() => prompts.render('planer.system'), (e: any) => {
    assert.equal(e.code, 'unknown-id');
    assert.equal(e.id, 'planer.system');
    assert.equal(e.message, 'unknown prompt id `planer.system` (did you mean `planner.system`?)');
    return true;
  });
});

test('a renderer that throws becomes an error naming the id and the part, with the thrown value as cause', () => {
  const prompts = new PromptRegistry();
  const boom = new Error('boom');
  prompts.registerDefault('task.system', () => {
    throw boom;
  });
  assert.throws(
    () => prompts.render('task.system'),
    (e: any) => {
      assert.equal(e.code, 'renderer-panicked');
      assert.equal(e.id, 'task.system');
      assert.equal(e.locale, 'en');
      assert.equal(e.message, 'the default of prompt `task.system` failed while rendering for `en`: it threw Error: boom');
      assert.equal(e.cause, boom);
      return true;
    },
  );
  // Thrown non-errors are kept too.
  prompts.append('other.system', () => {
    throw 'a string';
  });
  prompts.registerDefault('other.system', 'Other.');
  assert.throws(() => prompts.render('other.system'), (e: any) => e.cause === 'a string');

  // The registry stays usable.
  prompts.registerDefault('task.system', 'Fixed.');
  assert.equal(prompts.render('task.system'), 'Fixed.');
  assert.throws(() => prompts.renderTraced('other.system'), /appender #1/);
});

test('a renderer may call back into the registry: render, override and list, without deadlock', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('rules.system', 'Rule one.');
  prompts.registerDefault('task.system', (ctx: { n: number }) => {
    const rules = prompts.render('rules.system');
    prompts.override('rules.system', 'en', `Rule ${ctx.n + 1}.`);
    return `Task with ${prompts.list().length} prompts. ${rules}`;
  });

  assert.equal(prompts.render('task.system', { n: 1 }), 'Task with 2 prompts. Rule one.');
  assert.equal(prompts.render('task.system', { n: 2 }), 'Task with 2 prompts. Rule 2.');
  assert.equal(prompts.render('rules.system'), 'Rule 3.');
});

test('a renderer that recurses into its own prompt fails with an error, not a crash', () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('loop.system', () => prompts.render('loop.system'));
  assert.throws(
    () => prompts.render('loop.system'),
    (e: any) => {
      assert.equal(e.code, 'renderer-panicked');
      assert.match(e.message, /^the default of prompt `loop\.system` failed while rendering/);
      // Somewhere down the chain of causes is the stack overflow.
      let cause = e;
      while (cause?.cause !== undefined) cause = cause.cause;
      assert.ok(cause instanceof RangeError, String(cause));
      return true;
    },
  );
  prompts.registerDefault('loop.system', 'Done.');
  assert.equal(prompts.render('loop.system'), 'Done.');
});

test("a renderer's error inside a nested render reaches the outer render's caller", () => {
  const prompts = new PromptRegistry();
  prompts.registerDefault('inner.system', () => {
    throw new Error('inner broke');
  });
  prompts.registerDefault('outer.system', () => `Outer: ${prompts.render('inner.system')}`);
  assert.throws(() => prompts.render('outer.system'), (e: any) => {
    assert.match(e.message, /the default of prompt `outer\.system` failed .* it threw Error: the default of prompt `inner\.system` failed/);
    assert.equal(e.cause.cause.message, 'inner broke');
    return true;
  });
});

test('a wrong position for a pinned block is a TypeError', () => {
  const prompts = new PromptRegistry();
  prompts.register('auditor', { body: 'A.', tail: ['T.'] });
  assert.throws(() => untyped(prompts.translatePin.bind(prompts), 'auditor', 'ja', 'middle', 0, 'x'), typeErrorNaming('position'));
  assert.throws(() => untyped(prompts.translatePin.bind(prompts), 'auditor', 'ja', 'tail', '0', 'x'), typeErrorNaming('index'));
  assert.throws(() => prompts.translatePin('auditor', 'ja', 'tail', -1, 'x'), (e: any) => {
    assert.equal(e.code, 'ERR_OUT_OF_RANGE');
    assert.ok(e instanceof RangeError);
    assert.match(e.message, /`index` must be a whole number from 0, not -1/);
    return true;
  });
  assert.equal(prompts.render('auditor', undefined, 'ja'), 'A.\n\nT.');
});
