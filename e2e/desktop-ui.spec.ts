import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { freshLink, rowsOf } from './helpers';
import { SLOW_REPLY } from './model-script';

/**
 * The desktop window's main views, driven as a user would through `serve` in Chromium at
 * 1024×700, against the scripted model server and real hands (a local folder, a container of
 * the shared test Docker engine). Each main view is saved to test-results/screens/.
 */

test.use({ viewport: { width: 1024, height: 700 } });
test.describe.configure({ mode: 'serial' });

const SCREENS = path.resolve(import.meta.dirname, '..', 'test-results', 'screens');
const shot = async (page: Page, name: string) => {
  fs.mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENS, `${name}.png`) });
};

/** Starts a shared test backend (idempotent) and returns what its script exports. */
function backend(kind: 'docker' | 'adb'): Record<string, string> {
  const out = execFileSync('bash', [path.resolve(import.meta.dirname, '..', `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', timeout: 180_000 });
  return Object.fromEntries([...out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)].map((m) => [m[1]!, m[2]!]));
}

/**
 * A turn on the shared adb backend (other test files kill and revive its devices): the lock
 * test/helpers/hands-env.ts takes, held by a child until released.
 */
async function adbTurn(): Promise<() => void> {
  fs.mkdirSync('/tmp/corral-hands/adb', { recursive: true });
  const holder = spawn('flock', ['/tmp/corral-hands/adb/.test-lock', 'sh', '-c', 'echo locked; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`flock exited with ${code}`)));
  });
  return () => holder.stdin!.end();
}

/** The shared Docker test engine (started if needed; idempotent). */
function dockerEnv(): { host: string; image: string } {
  const out = execFileSync('bash', [path.resolve(import.meta.dirname, '..', 'test/hands-env/docker.sh'), 'start'], { encoding: 'utf8', timeout: 180_000 });
  const get = (k: string) => new RegExp(`^export ${k}=['"]?([^'"\\n]*)`, 'm').exec(out)?.[1] ?? '';
  return { host: get('CORRAL_TEST_DOCKER_HOST'), image: get('CORRAL_TEST_DOCKER_IMAGE') };
}

async function newAgent(page: Page, name: string) {
  await page.getByRole('tab', { name: 'Agents' }).click();
  await page.getByRole('button', { name: 'New agent' }).click();
  const form = page.getByRole('form', { name: 'New agent' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Model').fill('claude-test');
  await form.getByLabel('System prompt').fill('You run commands when asked.');
  await form.getByLabel('Permission for bash').selectOption('always_allow');
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(page.getByRole('button', { name: `Edit agent ${name}` })).toBeVisible();
}

async function newEnvironment(page: Page, name: string, kind: 'local' | 'docker' | 'adb', settings: Record<string, string> = {}) {
  await page.getByRole('tab', { name: 'Environments' }).click();
  await page.getByRole('button', { name: 'New environment' }).click();
  const form = page.getByRole('form', { name: 'New environment' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Kind').selectOption(kind);
  for (const [label, value] of Object.entries(settings)) await form.getByLabel(label, { exact: false }).fill(value);
  await form.getByRole('button', { name: 'Create environment' }).click();
  await expect(page.getByRole('button', { name: `Edit environment ${name}` })).toBeVisible();
}

async function startSession(page: Page, opts: { agent: string; env: string; title: string; message: string; kind?: string }) {
  await page.getByRole('tab', { name: 'Sessions' }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  const form = page.getByTestId('new-session-form');
  await form.getByLabel('Agent').selectOption({ label: `${opts.agent} (v1, claude-test)` });
  await form.getByLabel('Environment (main hand)').selectOption({ label: `${opts.env} (${opts.kind ?? 'local'})` });
  await form.getByLabel('Title').fill(opts.title);
  await form.getByLabel('First message').fill(opts.message);
  await form.getByRole('button', { name: 'Start session' }).click();
  await expect(page.getByTestId('session-head')).toContainText(opts.title);
}

const idle = (page: Page, n: number) => expect(rowsOf(page, 'session.status_idle')).toHaveCount(n, { timeout: 30_000 });

test('agents, environments and a session made in the window; the reply streams; interrupt stops the turn', async ({ page }) => {
  const docker = dockerEnv();
  await page.goto(await freshLink());
  await newAgent(page, 'window-agent');
  await shot(page, 'agents');
  await newEnvironment(page, 'this-machine', 'local');
  await newEnvironment(page, 'busybox-box', 'docker', { Image: docker.image, 'Docker host': docker.host });
  await shot(page, 'environments');

  await page.getByRole('tab', { name: 'Sessions' }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  await shot(page, 'new-session');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await startSession(page, { agent: 'window-agent', env: 'this-machine', title: 'made in the window', message: 'please write very slowly' });

  // The reply streams in live, then is logged.
  await expect(page.getByTestId('live-text-body')).not.toHaveText('', { timeout: 20_000 });
  await shot(page, 'streaming');
  await expect(rowsOf(page, 'agent.message').first()).toContainText(SLOW_REPLY.slice(0, 40), { timeout: 30_000 });
  await idle(page, 1);

  // A long command, interrupted with the button: the turn stops, the call is answered, the session idles.
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('run a long command');
  await page.getByRole('textbox', { name: 'Message', exact: true }).press('Enter');
  const interrupt = page.getByRole('button', { name: 'Interrupt' });
  await expect(interrupt).toBeEnabled({ timeout: 20_000 });
  await expect(rowsOf(page, 'agent.tool_use')).toHaveCount(1);
  await interrupt.click();
  await expect(rowsOf(page, 'user.interrupt')).toHaveCount(1);
  await idle(page, 2);
  await expect(rowsOf(page, 'agent.tool_result').first()).toHaveClass(/failed/);
  await expect(interrupt).toBeDisabled();
  // And with the shortcut: Escape in the message box.
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('run a long command');
  await page.getByRole('textbox', { name: 'Message', exact: true }).press('Enter');
  await expect(interrupt).toBeEnabled({ timeout: 20_000 });
  await expect(rowsOf(page, 'agent.tool_use')).toHaveCount(2);
  await page.getByRole('textbox', { name: 'Message', exact: true }).press('Escape');
  await expect(rowsOf(page, 'user.interrupt')).toHaveCount(2);
  await idle(page, 3);
  await shot(page, 'interrupted');
});

test('scrub back, reload at that position; a slice and its model request', async ({ page }) => {
  await page.goto(await freshLink());
  await page.getByRole('button', { name: /made in the window/ }).click();
  await idle(page, 3);
  const range = page.getByRole('slider', { name: 'Position in the session' });
  // Back to the first idle: the state panel shows the session as it stood then.
  const firstIdle = Number(await rowsOf(page, 'session.status_idle').first().getAttribute('data-seq'));
  await page.getByLabel('Jump to event number').fill(String(firstIdle));
  await page.getByLabel('Jump to event number').press('Enter');
  await expect(page.getByTestId('state-panel')).toHaveAttribute('data-seq', String(firstIdle));
  await range.focus();
  await page.keyboard.press('ArrowLeft');
  const at = firstIdle - 1;
  await expect(page.getByTestId('state-panel')).toHaveAttribute('data-seq', String(at));
  await expect(page.getByTestId('state-status')).toHaveText('running');
  await expect(page.getByTestId('state-transcript')).toContainText(SLOW_REPLY.slice(0, 30));
  await expect(page.getByTestId('state-transcript')).not.toContainText('run a long command');
  await expect(page).toHaveURL(new RegExp(`[?&]at=${at}(&|$)`));
  await expect(rowsOf(page, 'session.status_idle').first()).toHaveClass(/future/);
  await shot(page, 'scrubbed');
  // The keyboard sheet.
  await page.getByTestId('event-list').focus();
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keys' })).toBeVisible();
  await page.getByRole('dialog', { name: 'Keys' }).getByRole('button', { name: 'Close' }).click();
  await expect(page.getByRole('dialog', { name: 'Keys' })).toHaveCount(0);

  // Reloaded, the page opens at the same position.
  await page.reload();
  await expect(page.getByTestId('state-panel')).toHaveAttribute('data-seq', String(at));
  await expect(page.locator(`[data-testid="event-row"][data-seq="${at}"]`)).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('scrub-position')).toContainText(`#${at} /`);

  // Playback from there moves the cursor forward on its own.
  await page.getByRole('combobox', { name: 'Playback speed' }).selectOption('16');
  await page.getByRole('button', { name: 'Play' }).click();
  await expect.poll(async () => Number(await page.getByTestId('state-panel').getAttribute('data-seq'))).toBeGreaterThan(at);
  // It stops by itself at the last event.
  await expect(page.getByRole('button', { name: 'Play' })).toBeVisible({ timeout: 20_000 });

  // A slice: click one row, shift-click another; the raw events and the model request at its end.
  await page.getByLabel('Jump to event number').fill('1');
  await page.getByLabel('Jump to event number').press('Enter');
  const first = rowsOf(page, 'user.message').first();
  await first.click();
  await rowsOf(page, 'agent.message').first().click({ modifiers: ['Shift'] });
  await expect(page.getByRole('tab', { name: 'Slice' })).toHaveAttribute('aria-selected', 'true');
  const raw = page.getByTestId('slice-raw');
  await expect(raw).toContainText('"type":"user.message"');
  await page.getByRole('button', { name: /^Model request at #/ }).click();
  const request = page.getByTestId('model-request');
  await expect(request).toContainText('claude-test');
  await expect(request.getByTestId('request-message').first()).toContainText('please write very slowly');
  await expect(page).toHaveURL(/[?&]slice=\d+-\d+/);
  // The strip zooms to the slice, and back.
  await page.getByRole('button', { name: 'Zoom to slice' }).click();
  await shot(page, 'slice');
  await page.getByRole('button', { name: 'Reset zoom' }).click();
  await expect(page.getByRole('button', { name: 'Reset zoom' })).toHaveCount(0);
});

test('a colourful output longer than the model\'s cap is read whole, with its colours', async ({ page }) => {
  await page.goto(await freshLink());
  await startSession(page, { agent: 'window-agent', env: 'this-machine', title: 'colours', message: 'show me a colourful output' });
  await idle(page, 1);
  await rowsOf(page, 'agent.tool_result').first().click();
  const inspector = page.getByTestId('inspector');
  await expect(inspector.getByTestId('exit-badge')).toHaveText('exit 0');
  await expect(inspector.getByRole('button', { name: /Show all \d+ lines/ })).toBeVisible();
  await inspector.getByRole('button', { name: /Show the full output/ }).click();
  const full = inspector.getByTestId('full-output');
  await expect(full).toContainText('line 2000 of the colourful output');
  await expect(full).toContainText('line 1000 of the colourful output');
  await expect(full.locator('.ansi-green-fg').first()).toHaveText('ok');
  await expect(full.locator('.ansi-red-fg.ansi-bold, .ansi-bright-red-fg').first()).toHaveText('red');
  expect(await full.locator('.ansi-green-fg').count()).toBe(2000);
  await shot(page, 'full-output');
});

test('a written file shows as a diff, the call beside its result', async ({ page }) => {
  await page.goto(await freshLink());
  await startSession(page, { agent: 'window-agent', env: 'this-machine', title: 'hello file', message: 'create hello.txt and show me it' });
  await idle(page, 1);
  await rowsOf(page, 'agent.tool_use').first().click();
  const inspector = page.getByTestId('inspector');
  await expect(inspector.getByTestId('diff')).toContainText('+hello from corral');
  await expect(inspector.getByTestId('diff')).toContainText('@@ -1,0 +1,1 @@');
  await shot(page, 'diff');
  await rowsOf(page, 'agent.tool_use').nth(1).click();
  await expect(inspector.getByLabel('Command')).toHaveText('$ cat hello.txt');
  await expect(inspector.getByTestId('ansi-output')).toContainText('hello from corral');
});

test('fork from an event onto another hand; ancestry both ways', async ({ page }) => {
  await page.goto(await freshLink());
  await page.getByRole('button', { name: /^colours/ }).click();
  await idle(page, 1);
  const parentUrl = page.url();
  await rowsOf(page, 'user.message').first().click();
  await page.getByRole('button', { name: 'Fork from here…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Fork from #1' });
  await expect(dialog.getByTestId('fork-preview')).toContainText('Event 1 is shared');
  await dialog.getByLabel('Main hand').selectOption({ label: 'busybox-box (docker)' });
  await dialog.getByLabel('Message to send in the fork').fill('say hello on this hand');
  await expect(dialog.getByTestId('fork-preview')).toContainText('Your message is added');
  await expect(dialog.getByTestId('fork-preview')).toContainText('not rewound');
  await shot(page, 'fork-dialog');
  await dialog.getByRole('button', { name: 'Fork' }).click();

  // The fork runs on the container: its hand is provisioned there and the command answers from it.
  await expect(page.getByTestId('ancestry')).toContainText('Forked from');
  await idle(page, 1);
  await expect(rowsOf(page, 'hand.provisioning').first()).toContainText('docker');
  await expect(rowsOf(page, 'agent.tool_result').first()).toContainText('hello from');
  await expect(rowsOf(page, 'agent.tool_result').first().getByTestId('event-badge')).toHaveText('exit 0');
  await expect(page.getByTestId('lane-canvas')).toHaveAttribute('data-lanes', 'main');
  await expect(page.getByTestId('state-hands')).toContainText('docker');
  expect(await rowsOf(page, 'agent.tool_use').count()).toBe(1);
  await shot(page, 'fork');

  // Back to the parent (at the fork point), which is intact and marks where the fork was made.
  await page.getByTestId('parent-link').click();
  await expect(page.getByTestId('session-head')).toContainText('colours');
  await expect(page.locator('[data-testid="event-row"][data-seq="1"]').getByTestId('fork-mark')).toBeVisible();
  expect(await rowsOf(page, 'hand.provisioning').first().textContent()).toContain('local');
  await expect(page.getByTestId('fork-link')).toHaveCount(1);
  await page.getByTestId('fork-link').click();
  await expect(page.getByTestId('ancestry')).toContainText('Forked from');
  expect(page.url()).not.toBe(parentUrl);
});

test('an Android screenshot shows as an image', async ({ page }) => {
  const release = await adbTurn();
  try {
    const adb = backend('adb');
    await page.goto(await freshLink());
    await newEnvironment(page, 'test-phone', 'adb', { 'Device serial': adb.CORRAL_TEST_ADB_SERIAL!, 'adb server port': adb.ANDROID_ADB_SERVER_PORT! });
    await startSession(page, { agent: 'window-agent', env: 'test-phone', kind: 'adb', title: 'phone', message: 'take a screenshot' });
    await idle(page, 1);
    await rowsOf(page, 'agent.tool_result').first().click();
    const img = page.getByTestId('inspector').getByRole('img', { name: /Screenshot 1/ });
    await expect(img).toBeVisible();
    expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(64);
    await shot(page, 'screenshot');
  } finally {
    release();
  }
});

test('dark theme at 1024×700', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(await freshLink());
  await page.getByRole('button', { name: /made in the window/ }).click();
  await idle(page, 3);
  await rowsOf(page, 'agent.tool_result').first().click();
  await page.waitForTimeout(400); // the overview strip redraws at most four times a second
  await shot(page, 'session-dark');
  await page.getByRole('tab', { name: 'State' }).click();
  await expect(page.getByTestId('usage-chart')).toHaveAttribute('data-turns', '3');
  await page.waitForTimeout(600);
  await shot(page, 'state-dark');
  // Nothing spills out of the window.
  const overflow = await page.evaluate(() => {
    const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number; scrollHeight: number } }; innerWidth: number; innerHeight: number };
    return g.document.documentElement.scrollWidth > g.innerWidth || g.document.documentElement.scrollHeight > g.innerHeight;
  });
  expect(overflow).toBe(false);
});
