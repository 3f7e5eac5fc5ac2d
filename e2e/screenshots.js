// The book's pictures of the web page, rewritten on demand
// (`npm run screenshots`), not by the tests: docs/src/images/prompt-page.png
// (a prompt with the locale matrix, zh-HK and pt-PT typed in) and
// docs/src/images/compare.png (what v2 of the prompt changed).

import fs from 'node:fs';
import path from 'node:path';

import { PACK, PROMPT, ROOT, launchBrowser, signIn, startRegistry } from './harness.js';

const IMAGES = path.join(ROOT, 'docs', 'src', 'images');
const PROMPT_PATH = `/packs/${PACK}/prompts/${PROMPT}`;

const registry = await startRegistry('sqlite');
const chromium = await launchBrowser();
try {
  const page = await signIn(chromium.browser, registry, registry.keys.admin);
  fs.mkdirSync(IMAGES, { recursive: true });

  // From the top to the end of the locale matrix: the versions and the matrix.
  await page.goto(`${PROMPT_PATH}?locales=zh-HK,pt-PT`);
  const matrix = page.getByRole('table').filter({ has: page.getByRole('row', { name: /zh-HK/ }) });
  const box = await matrix.boundingBox();
  const width = page.viewportSize().width;
  await page.screenshot({
    path: path.join(IMAGES, 'prompt-page.png'),
    fullPage: true,
    clip: { x: 0, y: 0, width, height: Math.ceil(box.y + box.height + 32) },
  });

  await page.goto(`${PROMPT_PATH}/compare?from=v1&to=v2`);
  await page.getByRole('insertion').first().waitFor();
  await page.screenshot({ path: path.join(IMAGES, 'compare.png'), fullPage: true });

  console.log(`wrote ${path.relative(ROOT, IMAGES)}/prompt-page.png and compare.png`);
} finally {
  await chromium.close();
  await registry.stop();
}
