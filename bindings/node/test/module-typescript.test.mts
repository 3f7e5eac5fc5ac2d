// An ES module written in TypeScript and compiled with `module: nodenext`,
// as the seeds are: the named imports type-check against the ES module
// entry's declarations and resolve at run time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import { Pack, PromptRegistry, resolvePrompt, type Diagnostic } from 'promptreg';

const goalAgent = fileURLToPath(new URL('../../../../examples/goal-agent', import.meta.url));

test('a TypeScript ES module imports the package by name', () => {
  const prompts = new PromptRegistry();
  Pack.load(goalAgent).install(prompts);
  const ids: string[] = prompts.list();
  assert.ok(ids.length > 0);
  const none: Diagnostic[] = [];
  assert.deepEqual(none, []);
  assert.equal(typeof resolvePrompt, 'function');
});
