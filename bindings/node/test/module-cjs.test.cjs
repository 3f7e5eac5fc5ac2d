// The package required from CommonJS: the same names as the ES module entry.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { Pack, PromptRegistry, promptRegistry } = require('promptreg');

const goalAgent = path.resolve(__dirname, '../../../examples/goal-agent');

test('require gives the named exports', () => {
  assert.ok(promptRegistry instanceof PromptRegistry);
  const prompts = new PromptRegistry();
  Pack.load(goalAgent).install(prompts);
  assert.ok(prompts.list().length > 0);
});

test('every export of the native module is required by name', () => {
  const binding = require('../binding.js');
  const expected = Object.keys(binding).filter((name) => !name.startsWith('__'));
  // Written in JavaScript: the process-wide registry and `resolvePrompt`.
  expected.push('promptRegistry', 'resolvePrompt');
  assert.deepEqual(Object.keys(require('promptreg')).sort(), expected.sort());
});

test('the ES module entry is the same module', async () => {
  const imported = await import('promptreg');
  assert.equal(imported.Pack, Pack);
  assert.equal(imported.promptRegistry, promptRegistry);
});
