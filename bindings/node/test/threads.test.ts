// A worker thread loads the package too and gets its own process-wide
// registry: JavaScript renderers never cross threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

import { promptRegistry } from 'promptreg';

test('a worker has its own process-wide registry and renders its own JavaScript renderers', async () => {
  promptRegistry.registerDefault('threads.system', () => 'main thread');

  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { promptRegistry, PromptRegistry } = require(workerData.pkg);
    const sawMain = promptRegistry.has('threads.system');
    promptRegistry.registerDefault('threads.system', (ctx, locale) => 'worker ' + ctx.n + ' ' + locale);
    const local = new PromptRegistry();
    local.registerDefault('x.system', () => { throw new Error('in worker'); });
    let error;
    try { local.render('x.system'); } catch (e) { error = e.message; }
    parentPort.postMessage({ sawMain, text: promptRegistry.render('threads.system', { n: 7 }, 'ja'), error });
    `,
    { eval: true, workerData: { pkg: require.resolve('promptreg') } },
  );
  const message = await new Promise<{ sawMain: boolean; text: string; error: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();

  assert.deepEqual(message, {
    sawMain: false,
    text: 'worker 7 ja',
    error: 'the default of prompt `x.system` failed while rendering for `en`: it threw Error: in worker',
  });
  assert.equal(promptRegistry.render('threads.system'), 'main thread');
});
