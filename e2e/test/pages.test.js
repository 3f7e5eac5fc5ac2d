// The web page of `promptreg serve` in Chromium: what a prompt's owner does
// with it, from signing in to rolling back a release. Elements are found only
// by their accessible role, label or text (the page's contract), so a test
// that passes also says the page works with a screen reader's names.
// The whole suite runs on SQLite, then on PostgreSQL when a server is given.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  GATED,
  PACK,
  PROMPT,
  SECOND_VERSION_LINE,
  databaseKinds,
  launchBrowser,
  screenshot,
  signIn,
  startFollower,
  startRegistry,
} from '../harness.js';

const PROMPT_PATH = `/packs/${PACK}/prompts/${PROMPT}`;
const FILE = `defaults/${PROMPT}.md`;

for (const kind of databaseKinds()) {
  describe(`the web page on ${kind}`, () => {
    let registry;
    let chromium;
    const pages = [];

    before(async () => {
      registry = await startRegistry(kind);
      chromium = await launchBrowser();
    });

    after(async () => {
      await Promise.allSettled(pages.map((page) => page.context().close()));
      await chromium?.close();
      await registry?.stop();
    });

    /** A page signed in with the key of `scope`, closed with the suite. */
    async function session(scope) {
      const page = await signIn(chromium.browser, registry, registry.keys[scope]);
      pages.push(page);
      return page;
    }

    /** A page with no session. */
    async function signedOut() {
      const context = await chromium.browser.newContext({ baseURL: registry.url });
      const page = await context.newPage();
      pages.push(page);
      return page;
    }

    /** The prompt page, loaded. */
    async function openPrompt(page) {
      await page.goto(PROMPT_PATH);
      await page.getByRole('heading', { level: 1, name: PROMPT }).waitFor();
    }

    /** Submits with `click`, returns the response to the form's POST. */
    async function post(page, click) {
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        click(),
      ]);
      await page.waitForLoadState();
      return response;
    }

    test('signed out, a page leads to the sign-in form, which refuses a wrong key', async () => {
      const page = await signedOut();
      await page.goto(`/packs/${PACK}`);
      assert.equal(new URL(page.url()).pathname, '/sign-in');
      await screenshot(page, kind, 'sign-in');
      await page.getByLabel('API key', { exact: true }).fill('prk_0000000000000000000000000000000000000000000000000000000000000000');
      const response = await post(page, () => page.getByRole('button', { name: 'Sign in' }).click());
      assert.equal(response.status(), 401);
      await page.getByText('This key is not valid').waitFor();
      assert.equal(await page.getByLabel('API key', { exact: true }).getAttribute('type'), 'password');
      await screenshot(page, kind, 'sign-in-refused');
    });

    test('the sign-in form works with the keyboard alone', async () => {
      const page = await signedOut();
      await page.goto('/sign-in');
      const field = page.getByLabel('API key', { exact: true });
      // Tab from the top of the page until the field has the focus.
      let tabs = 0;
      while (!(await field.evaluate((el) => el === document.activeElement))) {
        assert.ok(tabs++ < 20, 'the API key field is reachable with Tab');
        await page.keyboard.press('Tab');
      }
      await page.keyboard.type(registry.keys.admin);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${registry.url}/`);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.getByText('ada', { exact: true }).waitFor();
    });

    test('the pack list leads to the pack, its filter and a prompt', async () => {
      const page = await session('admin');
      await page.getByRole('link', { name: 'Packs' }).waitFor();
      await screenshot(page, kind, 'packs');
      await page.getByRole('link', { name: PACK, exact: true }).click();
      await page.getByRole('heading', { level: 2, name: 'goal-' }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'tool-' }).waitFor();
      await page.getByRole('link', { name: 'tool-create-goal', exact: true }).waitFor();
      await page.getByText('production → v1').first().waitFor();
      await screenshot(page, kind, 'pack');

      await page.getByLabel('Filter', { exact: true }).fill('auditor');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/[?&]/);
      await page.getByRole('link', { name: 'auditor', exact: true }).waitFor();
      assert.equal(await page.getByRole('link', { name: PROMPT, exact: true }).count(), 0);
      await screenshot(page, kind, 'pack-filtered');

      await page.goto(`/packs/${PACK}`);
      await page.getByRole('link', { name: PROMPT, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: PROMPT }).waitFor();
      for (const section of ['Labels', 'Versions', 'Locales', 'Pins', 'Model settings', 'Variables', 'Tests']) {
        await page.getByRole('heading', { level: 2, name: section, exact: true }).waitFor();
      }
      await page.getByRole('row', { name: /\bv2\b.*Say what is about to change/ }).waitFor();
      await page.getByRole('row', { name: /\bv1\b.*First version/ }).waitFor();
      for (const link of ['Compare', 'Playground', 'Edit']) {
        await page.getByRole('link', { name: link, exact: true }).waitFor();
      }
      await screenshot(page, kind, 'prompt');
    });

    test('the locale matrix shows the variant and the chain for a typed-in zh-HK', async () => {
      const page = await session('admin');
      await openPrompt(page);
      // A locale the pack has: its own file.
      await page.getByRole('row', { name: /\bja\b.*goal-running\.ja\.md/ }).waitFor();
      await page.getByLabel('Add locales', { exact: true }).fill('zh-HK');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/[?&]locales=zh-HK/);
      // zh-HK has no file of its own: the default, after the steps of its chain.
      const row = page.getByRole('row', { name: /zh-HK/ });
      await row.waitFor();
      const text = await row.innerText();
      assert.match(text, /zh-HK →.*→ default/s, text);
      assert.match(text, /\bdefault\b/, text);
      await screenshot(page, kind, 'locale-matrix');
    });

    test('an edit with an unclosed {{ shows the diagnostic at its line; fixed, it saves as v3', async () => {
      const page = await session('admin');
      await openPrompt(page);
      await page.getByRole('link', { name: 'Edit', exact: true }).click();
      const file = page.getByLabel(FILE, { exact: true });
      await file.waitFor();
      const original = await file.inputValue();
      assert.ok(original.includes(SECOND_VERSION_LINE), 'the editor shows the latest version');
      const base = original.endsWith('\n') ? original : `${original}\n`;
      const brokenLine = base.split('\n').length; // the line after the last one
      await file.fill(`${base}Report progress on {{ objective\n`);
      await page.getByRole('button', { name: 'Check', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const diagnostics = await alert.innerText();
      assert.match(diagnostics, new RegExp(`line ${brokenLine}, column \\d+`), diagnostics);
      await screenshot(page, kind, 'edit-diagnostic');

      // A failing Save shows the same diagnostic and records nothing.
      await page.getByLabel('Message', { exact: true }).fill('Report progress');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), new RegExp(`line ${brokenLine}, column \\d+`));

      await page.getByLabel(FILE, { exact: true }).fill(`${base}Report progress on {{ objective }} after each task.\n`);
      await page.getByLabel('Message', { exact: true }).fill('Report progress after each task');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Saved v3').waitFor();
      assert.equal(new URL(page.url()).pathname, PROMPT_PATH);
      await page.getByRole('row', { name: /\bv3\b.*Report progress after each task/ }).waitFor();
      await screenshot(page, kind, 'saved');
    });

    test('compare shows what v2 added to v1, side by side', async () => {
      const page = await session('admin');
      await openPrompt(page);
      await page.getByRole('link', { name: 'Compare', exact: true }).click();
      await page.getByLabel('From', { exact: true }).fill('v1');
      await page.getByLabel('To', { exact: true }).fill('v2');
      await page.getByRole('button', { name: 'Compare', exact: true }).click();
      await page.waitForURL(/[?&]from=v1/);
      await page.getByRole('insertion').filter({ hasText: 'Tell the user in one line' }).first().waitFor();
      assert.equal(await page.getByRole('deletion').filter({ hasText: 'Tell the user' }).count(), 0);
      await screenshot(page, kind, 'compare');
    });

    test('the playground renders a label in a locale, with its explain view and test results', async () => {
      const page = await session('admin');
      await openPrompt(page);
      await page.getByRole('link', { name: 'Playground', exact: true }).click();
      await page.getByLabel('Version or label', { exact: true }).fill('production');
      await page.getByLabel('Locale', { exact: true }).fill('en');
      await page.getByLabel('Context (JSON)', { exact: true }).fill(
        JSON.stringify({ goal_id: 'g-42', objective: 'Add CSV export to the reports page', tasks: [] }),
      );
      await page.getByRole('button', { name: 'Render', exact: true }).click();
      await page.getByRole('heading', { name: 'Result', exact: true }).waitFor();
      await page.getByRole('heading', { name: 'Explain', exact: true }).waitFor();
      await page.getByRole('heading', { name: 'Test results', exact: true }).waitFor();
      await page.getByText('[PI GOAL ACTIVE goalId=g-42]').first().waitFor();
      await screenshot(page, kind, 'playground');
    });

    test('production moves after a confirmation with the diff, and rolls back', async () => {
      const page = await session('admin');
      await openPrompt(page);
      await page.getByRole('link', { name: 'Move production', exact: true }).click();
      const heading = page.getByRole('heading', { name: /^Publish v\d+ to production\?$/ });
      await heading.waitFor();
      const version = (await heading.innerText()).match(/v(\d+)/)[1];
      await page.getByRole('insertion').first().waitFor(); // the diff being published
      await screenshot(page, kind, 'move-confirm');
      await page.getByLabel('Reason', { exact: true }).fill('Release the progress reports');
      await page.getByRole('button', { name: 'Publish', exact: true }).click();
      await page.getByText(`production now points at v${version}`).waitFor();
      assert.equal(new URL(page.url()).pathname, PROMPT_PATH);
      await screenshot(page, kind, 'moved');

      await page.getByRole('link', { name: 'Roll back production', exact: true }).click();
      await page.getByRole('heading', { name: 'Roll back production?' }).waitFor();
      await screenshot(page, kind, 'rollback-confirm');
      await page.getByLabel('Reason', { exact: true }).fill('The reports are too long');
      await page.getByRole('button', { name: 'Roll back', exact: true }).click();
      await page.getByText('production now points at v1').waitFor();

      await page.goto(`/packs/${PACK}`);
      await page.getByRole('link', { name: 'Label history' }).click();
      for (const column of ['Time', 'Label', 'Prompt', 'From', 'To', 'Actor', 'Reason']) {
        await page.getByRole('columnheader', { name: column, exact: true }).waitFor();
      }
      // Each move names the revision of the label it made.
      await page.getByRole('row', { name: new RegExp(`production r\\d+ ${PROMPT} v1 v${version} key:ada Release the progress reports`) }).waitFor();
      // The roll back's move (its reason is not recorded: the store's roll back takes none).
      await page.getByRole('row', { name: new RegExp(`production r\\d+ ${PROMPT} v${version} v1 key:ada`) }).waitFor();
      await screenshot(page, kind, 'history');
    });

    test('a gated label refuses a failing version with its cases; an admin forces it, and the label page restores the revision before', async () => {
      const writer = await session('write');
      await openPrompt(writer);
      await writer.getByRole('link', { name: `Move ${GATED}`, exact: true }).click();
      await writer.getByRole('heading', { name: new RegExp(`^Publish v\\d+ to ${GATED}\\?$`) }).waitFor();
      // The state it would serve, tested before the button: the snapshot fails.
      const results = writer.getByRole('region', { name: 'Test results' });
      await results.getByText(/^\d+ of \d+ cases passed$/).waitFor();
      await results.getByText(`${PROMPT} · full`).waitFor();
      assert.equal(await writer.getByLabel(/^Force past failing tests/).count(), 0, 'a write key cannot force');
      // Nor is it offered a Publish the store would refuse: it is told why.
      await writer.getByRole('alert').filter({ hasText: `${GATED} is gated and the tests of this state fail, so you cannot publish it` }).waitFor();
      assert.equal(await writer.getByRole('button', { name: 'Publish', exact: true }).count(), 0, 'no Publish for a key that cannot force');
      await screenshot(writer, kind, 'gated-confirm');

      const admin = await session('admin');
      await openPrompt(admin);
      await admin.getByRole('link', { name: `Move ${GATED}`, exact: true }).click();
      await admin.getByLabel(/^Force past failing tests/).check();
      await admin.getByLabel('Reason', { exact: true }).fill('The snapshot is updated next');
      await admin.getByRole('button', { name: 'Publish', exact: true }).click();
      await admin.getByText(new RegExp(`${GATED} now points at v\\d+`)).waitFor();

      // The label page: the forced revision on top; restore the one before.
      await admin.getByRole('link', { name: GATED, exact: true }).first().click();
      await admin.getByRole('heading', { level: 1, name: GATED }).waitFor();
      const forced = admin.getByRole('row', { name: /^r2 .*forced/ });
      await forced.waitFor();
      assert.match(await forced.innerText(), /forced by an admin/);
      await screenshot(admin, kind, 'label-revisions');
      await admin.getByRole('link', { name: 'Restore r1', exact: true }).click();
      await admin.getByRole('heading', { name: `Restore revision 1 of ${GATED}?` }).waitFor();
      await admin.getByRole('region', { name: 'Test results' }).getByText(/^(\d+) of \1 cases passed$/).waitFor();
      await admin.getByRole('deletion').first().waitFor();
      await screenshot(admin, kind, 'restore-confirm');
      await admin.getByLabel('Reason', { exact: true }).fill('Back to what passes');
      await admin.getByRole('button', { name: 'Restore revision 1', exact: true }).click();
      await admin.getByText(`${GATED} holds revision 1 again`).waitFor();
      await admin.getByRole('row', { name: /^r3 \w+ restore/ }).waitFor();
    });

    test('a release is one row of the label history, which expands to its moves', async () => {
      const page = await session('admin');
      await page.goto(`/packs/${PACK}/history`);
      const release = page.getByText(/^A release: \d+ entries$/).first();
      await release.waitFor();
      const link = page.getByRole('row').filter({ has: release }).getByRole('link', { name: PROMPT, exact: true });
      assert.equal(await link.isVisible(), false, 'the moves are folded');
      await release.click();
      await link.waitFor();
      await screenshot(page, kind, 'history-release');
    });

    test('the pages fit a 390 px wide screen, and the tables of a pack line up', async () => {
      const page = await session('admin');
      await page.setViewportSize({ width: 390, height: 844 });
      for (const path of ['/', `/packs/${PACK}`, PROMPT_PATH, `${PROMPT_PATH}/compare?from=v1&to=v2`, `${PROMPT_PATH}/playground`, `${PROMPT_PATH}/edit`, `/packs/${PACK}/history`]) {
        await page.goto(path);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${path} is ${overflow} px wider than the screen`);
      }
      await page.goto(`${PROMPT_PATH}/edit`);
      await screenshot(page, kind, 'edit-390');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`/packs/${PACK}`);
      const widths = await page.evaluate(() =>
        [...document.querySelectorAll('table.prompts')].map((t) => [...t.querySelectorAll('thead th')].map((th) => Math.round(th.getBoundingClientRect().width))),
      );
      assert.ok(widths.length > 1, 'the pack has several groups');
      for (const w of widths) assert.deepEqual(w, widths[0], 'every group has the same column widths');
    });

    test('the editor is monospace, lists the default file first, and adds a locale file', async () => {
      const page = await session('admin');
      await page.goto(`${PROMPT_PATH}/edit`);
      const labels = await page.locator('form label[for^="file-"]').allInnerTexts();
      assert.equal(labels[0], FILE, labels.join(', '));
      assert.ok(labels.slice(1).every((l) => l.startsWith(`defaults/${PROMPT}.`)), labels.join(', '));
      const font = await page.getByLabel(FILE, { exact: true }).evaluate((el) => getComputedStyle(el).fontFamily);
      assert.match(font, /monospace/, font);
      await page.getByLabel('New locale file', { exact: true }).fill('fr');
      await page.getByRole('button', { name: 'Add locale file', exact: true }).click();
      await page.getByText(`Added defaults/${PROMPT}.fr.md`).waitFor();
      const added = page.getByLabel(`defaults/${PROMPT}.fr.md`, { exact: true });
      assert.equal(await added.inputValue(), await page.getByLabel(FILE, { exact: true }).inputValue());
      await screenshot(page, kind, 'edit-add-locale');
    });

    test('the playground starts with a context of the declared variables', async () => {
      const page = await session('admin');
      await page.goto(`${PROMPT_PATH}/playground`);
      const context = JSON.parse(await page.getByLabel('Context (JSON)', { exact: true }).inputValue());
      for (const name of ['goal_id', 'objective', 'tasks']) assert.ok(name in context, JSON.stringify(context));
      assert.deepEqual(context.tasks, []);
    });

    test('a write key may edit, but only an admin key may move the protected production', async () => {
      const page = await session('write');
      await openPrompt(page);
      await page.getByRole('link', { name: 'Edit', exact: true }).waitFor();
      await page.getByText('Only admin keys may move production').first().waitFor();
      assert.equal(await page.getByRole('link', { name: 'Move production' }).count(), 0);
      assert.equal(await page.getByRole('link', { name: 'Roll back production' }).count(), 0);
    });

    test('a read-only key sees no edit controls, and the server refuses its forged POSTs', async () => {
      // The forms an admin submits, to replay with the read-only key's session.
      const admin = await session('admin');
      await admin.goto(`${PROMPT_PATH}/edit`);
      const save = await submission(admin.getByRole('button', { name: 'Save', exact: true }));
      await admin.goto(`${PROMPT_PATH}/labels/production/move?to=v2`);
      const publish = await submission(admin.getByRole('button', { name: 'Publish', exact: true }));

      const page = await session('read');
      await openPrompt(page);
      for (const name of ['Edit', 'Move production', 'Roll back production']) {
        assert.equal(await page.getByRole('link', { name }).count(), 0, `no ${name} link`);
      }
      await screenshot(page, kind, 'prompt-read-only');
      for (const [what, form] of [
        ['save', save],
        ['move', publish],
      ]) {
        await openPrompt(page);
        const response = await post(page, () => forge(page, form));
        assert.equal(response.status(), 403, `a read-only key's ${what}`);
        await page.getByText('This key may only read').waitFor();
      }
      await openPrompt(page);
      assert.equal(await page.getByRole('row', { name: /\bv4\b/ }).count(), 0, 'no version was saved');
    });

    test('the label page shows what serves it, live: a follower appears, then goes offline when killed', async () => {
      const page = await session('read');
      await page.goto(`/packs/${PACK}/labels/production`);
      const fleet = page.getByRole('region', { name: 'What serves production' });
      await fleet.getByText('No instance reports following production').waitFor();
      // A name with markup: shown as text, never as HTML.
      const follower = startFollower(registry, registry.keys.read, 'web-1', '<b>web</b> one');
      try {
        // The page is not reloaded: the view refreshes itself.
        await fleet.getByRole('status').filter({ hasText: /production: revision \d+ live on 1 of 1 instance$/ }).waitFor();
        const row = fleet.getByRole('row', { name: /web-1/ });
        await row.getByRole('cell', { name: '<b>web</b> one', exact: true }).waitFor();
        assert.equal(await fleet.locator('b').count(), 0, 'the name is escaped');
        await row.getByRole('cell', { name: 'online', exact: true }).waitFor();
        await screenshot(page, kind, 'label-fleet');
      } finally {
        await follower.kill();
      }
      await fleet.getByRole('row', { name: /web-1/ }).getByText('offline', { exact: true }).waitFor();
      await fleet.getByRole('status').filter({ hasText: /; 1 offline$/ }).waitFor();
    });

    test('the label page shows a gradual release while it runs', async () => {
      const api = (method, path, body) =>
        fetch(`${registry.url}/v1/packs/${PACK}/labels/production/split${path}`, {
          method,
          headers: { authorization: `Bearer ${registry.keys.admin}`, 'content-type': 'application/json' },
          body: body && JSON.stringify(body),
        });
      const started = await api('POST', '', { from: 'latest', percent: 12.5, reason: 'try <b>v2</b>' });
      assert.equal(started.status, 200, await started.clone().text());
      const split = await started.json();
      try {
        const page = await session('read');
        await page.goto(`/packs/${PACK}/labels/production`);
        const region = page.getByRole('region', { name: 'Gradual release' });
        await region
          .getByRole('status')
          .filter({ hasText: `Split ${split.split}: 12.5% of subjects get latest r${split.revision}` })
          .waitFor();
        await region.getByText('start 12.5% by key:ada: try <b>v2</b>').waitFor();
        assert.equal(await region.locator('b').count(), 0, 'the reason is escaped');
        await screenshot(page, kind, 'label-split');
      } finally {
        assert.equal((await api('POST', '/abort', { reason: 'done' })).status, 200);
      }
      const page = await session('read');
      await page.goto(`/packs/${PACK}/labels/production`);
      await page.getByRole('heading', { level: 2, name: 'What serves it' }).waitFor();
      assert.equal(await page.getByRole('region', { name: 'Gradual release' }).count(), 0);
    });

    test('a stale translation shows what changed; translated through the API, it is current', async () => {
      const page = await session('read');
      await openPrompt(page);
      // v2 added a line to the default the Japanese variant translates (v1).
      const row = page.getByRole('row', { name: /\bja\b.*goal-running\.ja\.md/ });
      await row.getByText('stale since v2').waitFor();
      await row.getByText('What changed in the default').click();
      const diff = await row.locator('pre').innerText();
      assert.ok(diff.includes(`+${SECOND_VERSION_LINE}`), diff);
      await screenshot(page, kind, 'locale-matrix-stale');
      await page.goto(`/packs/${PACK}`);
      await page.getByRole('row', { name: /^ja\s.*\bof 18\b.*1 stale/ }).waitFor();

      // A translator's PO file: the stale unit translated, its variables kept.
      const auth = { authorization: `Bearer ${registry.keys.write}` };
      const exported = await fetch(`${registry.url}/v1/packs/${PACK}/l10n/ja?format=po`, { headers: auth });
      assert.equal(exported.status, 200);
      const entries = (await exported.text()).split('\n\n');
      const at = entries.findIndex((e) => e.includes(`msgctxt "${PROMPT}:body"`));
      const entry = entries[at];
      const [source, target] = [entry.slice(entry.indexOf('msgid'), entry.indexOf('msgstr')), entry.slice(entry.indexOf('msgstr'))];
      const variables = [...new Set(source.match(/\{\{[^}]*\}\}/g) ?? [])].filter((v) => !target.includes(v));
      entries[at] = `${entry.replace('#, fuzzy\n', '').trimEnd()}\n"- 変更する前に、何を変えるかを一行でユーザーに伝えてください。${variables.join(' ')}\\n"`;
      const imported = await fetch(`${registry.url}/v1/packs/${PACK}/l10n/ja`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ file: entries.join('\n\n'), message: 'Japanese: say what is about to change' }),
      });
      const body = await imported.json();
      assert.equal(imported.status, 200, JSON.stringify(body));
      assert.deepEqual(body.written, [`defaults/${PROMPT}.ja.md`]);

      await openPrompt(page);
      const current = page.getByRole('row', { name: /\bja\b.*goal-running\.ja\.md/ });
      await current.getByText('current', { exact: true }).waitFor();
      assert.equal(await current.getByText(/stale/).count(), 0);
    });

    test('signing out ends the session', async () => {
      const page = await session('admin');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in$/);
      await page.goto(PROMPT_PATH);
      assert.equal(new URL(page.url()).pathname, '/sign-in');
    });
  });
}

/** The action and fields a click on `button` would submit (the CSRF token among them). */
function submission(button) {
  // The attribute, not `form.action`: a field named `action` shadows that property.
  return button.evaluate((b) => ({
    action: new URL(b.form.getAttribute('action') ?? '', document.baseURI).href,
    fields: [...new FormData(b.form, b)].filter(([, value]) => typeof value === 'string'),
  }));
}

/**
 * Submits `form` from `page`, with the CSRF token of the page's own session
 * (from its Sign out form): the server must refuse it for the key, not for
 * the token.
 */
async function forge(page, form) {
  const tokens = await page
    .getByRole('button', { name: 'Sign out' })
    .evaluate((b) => Object.fromEntries([...new FormData(b.form)].filter(([, value]) => typeof value === 'string')));
  await page.evaluate(
    ({ action, fields, tokens }) => {
      const forged = document.createElement('form');
      forged.setAttribute('method', 'post');
      forged.setAttribute('action', action);
      for (const [name, value] of fields) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = name in tokens ? tokens[name] : value;
        forged.append(input);
      }
      document.body.append(forged);
      forged.submit();
    },
    { ...form, tokens },
  );
}
