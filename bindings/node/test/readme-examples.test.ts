// The TypeScript and JavaScript examples of the READMEs and the book (this package's
// guide, the repository's "Node.js" section, and any the Python package's
// guide may have) are programs: each block is type-checked with the
// package's TypeScript (strict, `module: nodenext`, importing 'promptreg' by
// name as a user's project does, against the package's declarations), then
// run with node from the repository's root with a home of its own. A
// missing import, a name the example never defines, a changed signature or
// an example that throws fails here. An example that names
// `PROMPTREG_SERVER` finds there a real `promptreg serve` serving the
// web-agent pack (see follow.test.ts; skipped without the tool, except
// under CI=true).
//
// A comment on the line before a block's fence marks an exception; keep
// them rare:
//   <!-- example: not run (why) -->   type-checked only: the example needs
//                                      what a test has not (the
//                                      application's own files, say);
//   <!-- example: fragment -->        neither: a few lines that go on from
//                                      another example, with names of the
//                                      reader's own program.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { promptregBinary, startServer } from './support';

const PACKAGE = path.resolve(__dirname, '../..');
const ROOT = path.resolve(PACKAGE, '../..');
/** The book's pages under docs/src, as paths from the repository's root. */
function bookPages(dir = 'docs/src'): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return bookPages(child);
    return entry.name.endsWith('.md') ? [child] : [];
  });
}
const READMES = ['bindings/node/README.md', 'README.md', 'bindings/python/README.md', ...bookPages().sort()];
/** A fence's language -> the extension its block is checked and run as. */
const LANGUAGES: Record<string, string> = { ts: 'mts', typescript: 'mts', js: 'mjs', javascript: 'mjs' };
const MARK = /^<!-- example: (.*) -->$/;
/** Generous: the point is that it ends, not how fast. */
const DEADLINE_MS = 60_000;

interface Example {
  /** `README.md:94`, the README and the line of the opening fence. */
  name: string;
  /** The file it is written to: the README's path and the line, `README.md-94.mts`. */
  file: string;
  code: string;
  mark?: 'not run' | 'fragment';
}

function examples(): Example[] {
  const found: Example[] = [];
  for (const readme of READMES) {
    const lines = fs.readFileSync(path.join(ROOT, readme), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const extension = LANGUAGES[/^```(\w+)$/.exec(lines[i])?.[1] ?? ''];
      if (extension === undefined) continue;
      const end = lines.findIndex((line, j) => j > i && line === '```');
      assert.ok(end > i, `${readme}:${i + 1}: the block is never closed`);
      const name = `${readme}:${i + 1}`;
      found.push({
        name,
        file: `${readme.replace(/\//g, '-')}-${i + 1}.${extension}`,
        code: lines.slice(i + 1, end).join('\n') + '\n',
        mark: mark(name, lines[i - 1] ?? ''),
      });
      i = end;
    }
  }
  return found;
}

function mark(name: string, line: string): Example['mark'] {
  const text = MARK.exec(line)?.[1];
  if (text === undefined) return undefined;
  if (text === 'fragment') return 'fragment';
  if (/^not run \(.+\)$/.test(text)) return 'not run';
  throw new Error(`${name}: unknown mark \`${line}\`: \`fragment\` or \`not run (why)\``);
}

/** Writes the examples under `.test-build/readme` and type-checks them; `tsc`'s output. */
function typeCheck(checked: Example[]): { status: number | null; output: string; out: string } {
  const dir = path.join(PACKAGE, '.test-build', 'readme');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  for (const example of checked) fs.writeFileSync(path.join(dir, 'src', example.file), example.code);
  const config = {
    compilerOptions: {
      target: 'ES2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      allowJs: true,
      checkJs: true,
      rootDir: 'src',
      outDir: 'out',
      types: ['node'],
      skipLibCheck: true,
    },
    include: ['src'],
  };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
  const tsc = require.resolve('typescript/bin/tsc', { paths: [PACKAGE] });
  const run = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', timeout: DEADLINE_MS });
  return { status: run.status, output: `${run.stdout}${run.stderr}`, out: path.join(dir, 'out') };
}

test('the READMEs have TypeScript examples', () => {
  const names = examples().map((e) => e.name);
  for (const readme of READMES.slice(0, 2)) {
    assert.ok(names.some((name) => name.startsWith(`${readme}:`)), `${readme}: ${names.join(', ')}`);
  }
});

test('the README examples type-check and run', async (t) => {
  const all = examples();
  const checked = all.filter((e) => e.mark !== 'fragment');
  const { status, output, out } = typeCheck(checked);
  assert.equal(status, 0, `tsc on the README examples (in src/README-FENCE.mts, line N is the README's line FENCE + N):\n${output}`);

  const { bin, missing } = promptregBinary();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  t.after(() => server?.stop());
  const serverDir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-readme-server-'));
  t.after(() => fs.rmSync(serverDir, { recursive: true, force: true }));

  for (const example of checked) {
    const needsServer = example.code.includes('PROMPTREG_SERVER');
    const skip = example.mark === 'not run' ? 'marked not run' : needsServer && missing;
    await t.test(example.name, { skip }, async (t) => {
      if (needsServer) server ??= await startServer(bin!, serverDir);
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-readme-'));
      t.after(() => fs.rmSync(home, { recursive: true, force: true }));
      const script = path.join(out, example.file.replace(/\.m?ts$/, '.mjs'));
      const run = spawnSync(process.execPath, [script], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: DEADLINE_MS,
        env: { ...process.env, HOME: home, USERPROFILE: home, ...(server && { PROMPTREG_SERVER: server.url }) },
      });
      assert.equal(run.status, 0, `${example.name} exited with ${run.status ?? run.signal}:\n${run.stdout}${run.stderr}`);
    });
  }
});
