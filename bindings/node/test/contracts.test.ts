// A prompt's contract through the package: the whole request body each
// provider takes, with the tools and the output schema of the locale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { Pack, PromptRegistry } from 'promptreg';

const EXAMPLES = path.resolve(__dirname, '../../../../examples');

function registry(pack: string): PromptRegistry {
  const prompts = new PromptRegistry();
  Pack.load(path.join(EXAMPLES, pack)).install(prompts);
  return prompts;
}

test('an OpenAI request carries the tools of the locale and its settings', () => {
  const body = registry('web-agent').providerRequest('openai', 'webagent-narrator.system', { brand: 'Acme' }, 'ja') as {
    model: string;
    max_tokens: number;
    tools: Array<{ function: { name: string; description: string } }>;
  };
  assert.equal(body.model, 'gpt-4o-mini');
  assert.equal(body.max_tokens, 1200);
  assert.deepEqual(body.tools.map((t) => t.function.name), ['open_page', 'search_site', 'hand_over']);
  assert.equal(body.tools[0].function.description, 'サイトのページを開き、その本文を読みます。');
});

test('Anthropic and Gemini shapes carry the output schema', () => {
  const prompts = registry('goal-agent');
  const anthropic = prompts.providerRequest('anthropic', 'auditor') as {
    system: string;
    output_config: { format: { type: string } };
  };
  assert.ok(anthropic.system.startsWith('You are an independent auditor.'));
  assert.equal(anthropic.output_config.format.type, 'json_schema');
  const gemini = prompts.providerRequest('gemini', 'auditor', undefined, 'ja') as {
    generationConfig: { responseJsonSchema: { required: string[] } };
  };
  assert.deepEqual(gemini.generationConfig.responseJsonSchema.required, ['verdict', 'tasks']);
});

test('an unknown format is an error naming the formats', () => {
  assert.throws(
    () => registry('goal-agent').providerRequest('claude' as 'openai', 'auditor'),
    (e: Error & { code?: string }) =>
      e.code === 'invalid-contract' && e.message.includes('openai, openai-responses, anthropic, gemini'),
  );
});
