// The Node.js versions the package claims (`engines.node`) are ones its
// build tools support: `npm install` on any of them warns of no engine
// (EBADENGINE). A consumer builds the package (there is no prebuilt
// binary), so every package of the lockfile counts, optional and
// platform-specific ones included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

import semver from 'semver';

const read = (file) => JSON.parse(fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'));

test('every package of the lockfile supports every Node.js version the package claims', () => {
  const lock = read('package-lock.json');
  const claim = read('package.json').engines.node;
  assert.equal(lock.packages[''].engines.node, claim, 'package-lock.json is up to date with package.json');
  const refusing = Object.entries(lock.packages)
    .filter(([name, entry]) => name !== '' && entry.engines?.node !== undefined)
    .filter(([, entry]) => !semver.subset(claim, entry.engines.node))
    .map(([name, entry]) => `${name.replace(/^.*node_modules\//, '')}@${entry.version}: ${entry.engines.node}`);
  assert.deepEqual(refusing, [], `these do not support every Node.js version of "${claim}"`);
});

test("the README states the package's Node.js versions", () => {
  const claim = read('package.json').engines.node;
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes(`\`${claim}\``), `README.md names \`${claim}\``);
});
