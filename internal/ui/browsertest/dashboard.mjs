// Drives the pactum dashboard in a real headless Chromium (Debian's, with
// playwright-core). Run by internal/ui's TestBrowser, which starts the node
// and passes, in the environment:
//   BASE         the node's base URL
//   CHROMIUM     the browser's executable
//   SHOTS        the directory for screenshots
//   MODE         "open" (no auth) or "auth" (auth: bearer)
//   FAILED_ID    a task whose contract step failed
//   RUN_ID       a finished workflow run (open mode)
//   TOKEN        the bearer token to enter (auth mode)
//   OTHER_ID     another actor's task, which must not show (auth mode)
//   ASSERTION    the message of the failed assertion
// In open mode it prints READY once the task list's live stream is open,
// then reads one line from stdin: a JSON array of task ids the test has
// just submitted, which must appear and change state on the page without a
// reload. Any failure exits non-zero with a message on stderr.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const env = process.env;
const base = env.BASE;
const shots = env.SHOTS;
const timeout = 20000;

function fail(msg) { throw new Error(msg); }

const profile = mkdtempSync(join(tmpdir(), 'pactum-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1360, height: 900 },
});
const problems = [];
// Set while the test sends a wrong token on purpose: its 401 is expected.
let expectRefusal = false;
const page = context.pages()[0] || await context.newPage();
page.setDefaultTimeout(timeout);
page.on('console', (m) => {
  if (m.type() !== 'error') return;
  if (expectRefusal && m.text().includes('401')) return;
  problems.push('console: ' + m.text());
});
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
// Nothing may leave the page's origin.
page.on('request', (r) => { if (!r.url().startsWith(base)) problems.push('request to another origin: ' + r.url()); });

async function shot(name) {
  await page.screenshot({ path: join(shots, name + '.png'), fullPage: true });
}

function readLine() {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.once('line', (line) => { rl.close(); process.stdin.destroy(); resolve(line); });
  });
}

try {
  if (env.MODE === 'auth') {
    await page.goto(base + '/ui/');
    await page.waitForSelector('#tokenform:not([hidden])');
    if (await page.locator('tr[data-id]').count() !== 0) fail('the shell shows tasks before a token was given');
    expectRefusal = true;
    await page.fill('#token', 'not-the-token');
    await page.click('#tokenform button[type=submit]');
    await page.waitForSelector('#tokenerror:not([hidden])');
    expectRefusal = false;
    await page.fill('#token', env.TOKEN);
    await page.click('#tokenform button[type=submit]');
    await page.waitForSelector(`tr[data-id="${env.FAILED_ID}"]`);
    await page.waitForSelector('#tasks[data-live="open"]');
    if (await page.locator(`tr[data-id="${env.OTHER_ID}"]`).count() !== 0) fail("another actor's task is listed");
    await shot('auth-tasks');
    // The token stays for the tab: a link opens the task with it.
    await page.click(`tr[data-id="${env.FAILED_ID}"] a`);
    await page.waitForSelector('tr.failed-assertion');
    const retry = page.locator('button[data-action="retry"]');
    if (await retry.count() !== 1) fail('no retry button for the failed task');
    const before = await page.locator('.records tbody tr').count();
    await retry.click();
    await page.waitForFunction((n) => document.querySelectorAll('.records tbody tr').length > n, before);
    await shot('auth-task');
  } else {
    // Tasks: live.
    await page.goto(base + '/ui/');
    await page.waitForSelector('#tasks[data-live="open"]');
    // Record every state each row shows.
    await page.evaluate(() => {
      window.__states = {};
      const note = (tr) => { (window.__states[tr.dataset.id] ||= []).push(tr.dataset.state); };
      document.querySelectorAll('#tasks tbody tr[data-id]').forEach(note);
      new MutationObserver((muts) => {
        for (const m of muts) for (const n of m.addedNodes) if (n.nodeType === 1 && n.matches('tr[data-id]')) note(n);
      }).observe(document.querySelector('#tasks tbody'), { childList: true });
    });
    console.log('READY');
    const ids = JSON.parse(await readLine());
    for (const id of ids) await page.waitForSelector(`#tasks tr[data-id="${id}"]`);
    await page.waitForFunction((ids) => ids.some((id) => document.querySelector(`#tasks tr[data-id="${id}"]`)?.dataset.state === 'in_progress'), ids);
    await shot('tasks');
    await page.waitForFunction((ids) => ids.every((id) => document.querySelector(`#tasks tr[data-id="${id}"]`)?.dataset.state === 'succeeded'), ids);
    const states = await page.evaluate(() => window.__states);
    if (!states) fail('the page reloaded');
    for (const id of ids) {
      const seen = states[id] || [];
      if (!seen.includes('in_progress') || seen[seen.length - 1] !== 'succeeded') fail(`task ${id} showed states ${seen.join(' → ')}`);
    }
    // Newest first: the last submitted is on top.
    const top = await page.locator('#tasks tbody tr').first().getAttribute('data-id');
    if (top !== ids[ids.length - 1]) fail(`the top row is ${top}, not the newest task ${ids[ids.length - 1]}`);

    // A failed contract step.
    await page.goto(base + '/ui/tasks/' + env.FAILED_ID);
    const failed = page.locator('tr.failed-assertion');
    await failed.first().waitFor();
    const text = await failed.first().innerText();
    if (!text.includes(env.ASSERTION)) fail('the failed assertion reads: ' + text);
    if (!(await page.locator('.verdict.fail').first().innerText()).includes('contract FAILED')) fail('no failed verdict');
    if (await page.locator('svg.timeline g.seg').count() < 3) fail('the timeline has too few segments');
    await shot('task-failed-contract');

    // A workflow run: its steps, and the Workflows page with its report.
    await page.goto(base + '/ui/tasks/' + env.RUN_ID);
    await page.waitForSelector('ul.tree li[data-step="architect"]');
    await shot('task-workflow-run');
    await page.goto(base + '/ui/workflows');
    const rec = page.locator(`article.run[data-id="${env.RUN_ID}"] .recommendation`);
    await rec.waitFor();
    if ((await rec.innerText()).trim() !== 'SHIP') fail('the recommendation reads ' + await rec.innerText());
    if (!await rec.isVisible()) fail('the recommendation is not visible');
    await shot('workflows');

    // Audit: verify the chain.
    await page.goto(base + '/ui/audit');
    await page.click('text=Verify the chain now');
    await page.waitForSelector('.chainstatus.pass');
    await shot('audit');

    // Agents.
    await page.goto(base + '/ui/agents');
    await page.waitForSelector('tr[data-agent="summarize"]');
    await shot('agents');
  }
  if (problems.length) fail(problems.join('\n'));
} catch (e) {
  console.error(e.stack || String(e));
  if (problems.length) console.error(problems.join('\n'));
  try { await shot('failure-' + (env.MODE || 'open')); } catch {}
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
