// Another project uses the package the two ways the README's "Using it from
// another project" shows: `npm install` of the package's folder and of the
// tarball `npm pack` makes. Each project lives in a temporary folder with
// an npm cache of its own, installs offline (the package has no
// dependencies), requires and imports the package, and type-checks a
// TypeScript file against the installed declarations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PACKAGE = path.resolve(__dirname, '../..');
/** Generous: the point is that it works, not how fast. */
const DEADLINE_MS = 120_000;

/** npm as `npm test` ran it, else the one on the PATH. */
const NPM = process.env.npm_execpath?.endsWith('npm-cli.js')
  ? [process.execPath, process.env.npm_execpath]
  : ['npm'];

/** Runs npm in `cwd`: offline, with `cache` as its cache, nothing of the calling npm's settings. */
function npm(cwd: string, cache: string, ...args: string[]): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const run = spawnSync(NPM[0], [...NPM.slice(1), ...args, '--offline', '--no-audit', '--no-fund'], {
    cwd,
    encoding: 'utf8',
    timeout: DEADLINE_MS,
    env: { ...env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
  });
  const output = `${run.stdout}${run.stderr}`;
  assert.equal(run.status, 0, `npm ${args.join(' ')} exited with ${run.status ?? run.signal}:\n${output}`);
  assert.doesNotMatch(output, /EBADENGINE/, output);
  return run.stdout;
}

function node(cwd: string, ...args: string[]): string {
  const run = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: DEADLINE_MS });
  assert.equal(run.status, 0, `node ${args.join(' ')} exited with ${run.status ?? run.signal}:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

const USES = {
  'use.cjs': `const { PromptRegistry } = require('promptreg');
const prompts = new PromptRegistry();
prompts.registerDefault('greeting', 'Hello from require.');
console.log(prompts.render('greeting'));
`,
  'use.mts': `import { PromptRegistry, resolvePrompt } from 'promptreg';
const prompts = new PromptRegistry();
prompts.registerDefault('greeting', (ctx: { name: string }) => \`Hello \${ctx.name} from import.\`);
const { source } = resolvePrompt('auditor', undefined, '', 'Audit.', { home: '', promptsDir: 'prompts' });
console.log(prompts.render('greeting', { name: 'Ada' }), source);
`,
};

/** A project in a folder of its own that installs `spec`, then uses what it installed. */
function useFromProject(t: { after: (f: () => void) => void }, spec: (dir: string, cache: string) => string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promptreg-install-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const project = path.join(dir, 'project');
  const cache = path.join(dir, 'npm-cache');
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'a-project', version: '1.0.0', private: true }, null, 2),
  );
  npm(project, cache, 'install', spec(dir, cache));
  const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8'));
  assert.match(manifest.dependencies?.promptreg ?? '', /^file:/, JSON.stringify(manifest));

  for (const [file, code] of Object.entries(USES)) fs.writeFileSync(path.join(project, file), code);
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        strict: true,
        types: [],
      },
      files: ['use.mts'],
    }),
  );
  node(project, require.resolve('typescript/bin/tsc', { paths: [PACKAGE] }), '-p', '.');
  assert.equal(node(project, 'use.cjs'), 'Hello from require.\n');
  assert.equal(node(project, 'use.mjs'), 'Hello Ada from import. none\n');
}

test("a project installs the package's folder", (t) => {
  useFromProject(t, () => PACKAGE);
});

test('a project installs the tarball npm pack makes', (t) => {
  useFromProject(t, (dir, cache) => {
    const [packed] = JSON.parse(npm(PACKAGE, cache, 'pack', '--json', '--pack-destination', dir));
    return path.join(dir, packed.filename);
  });
});

test('the README says how another project installs the package', () => {
  const readme = fs.readFileSync(path.join(PACKAGE, 'README.md'), 'utf8');
  const section = /^## Using it from another project\n([^]*?)^## /m.exec(readme)?.[1];
  assert.ok(section, 'README.md has a section "Using it from another project"');
  for (const command of ['npm install /path/to/promptreg/bindings/node', 'npm pack', 'npm install ./promptreg-']) {
    assert.ok(section.includes(command), `the section shows \`${command}\``);
  }
});
