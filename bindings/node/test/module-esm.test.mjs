// The package imported as an ES module, the way its README shows: named
// exports that `import` resolves statically, the same objects `require`
// gives, and nothing the native module exports left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import * as promptreg from 'promptreg';
import { Pack, PromptRegistry, promptRegistry, resolvePrompt, resolvePromptBlock, check } from 'promptreg';

const require = createRequire(import.meta.url);
const goalAgent = fileURLToPath(new URL('../../../examples/goal-agent', import.meta.url));

test('named imports are the package', () => {
  assert.equal(typeof Pack.load, 'function');
  assert.equal(typeof resolvePrompt, 'function');
  assert.equal(typeof resolvePromptBlock, 'function');
  assert.equal(typeof check, 'function');
  assert.ok(promptRegistry instanceof PromptRegistry);

  const prompts = new PromptRegistry();
  Pack.load(goalAgent).install(prompts);
  assert.ok(prompts.list().length > 0);
});

test('import and require give the same objects and one process-wide registry', () => {
  const required = require('promptreg');
  assert.equal(required.Pack, Pack);
  assert.equal(required.PromptRegistry, PromptRegistry);
  assert.equal(required.promptRegistry, promptRegistry);
});

test('every export of the native module is a named export', () => {
  const binding = require('../binding.js');
  const expected = Object.keys(binding).filter((name) => !name.startsWith('__'));
  // Written in JavaScript: the process-wide registry and `resolvePrompt`.
  expected.push('promptRegistry', 'resolvePrompt');
  assert.deepEqual(Object.keys(promptreg).sort(), expected.sort());
});
