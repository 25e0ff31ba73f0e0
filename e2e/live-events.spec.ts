import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { apiKey, baseURL, client, freshLink, newSession, rowsOf } from './helpers';

test('the printed link authorises the page once, with a __Host- cookie Chromium keeps, and carries no key', async ({ page, browser }) => {
  const printed = process.env.E2E_LINK!;
  expect(printed).not.toContain(apiKey);
  await page.goto(printed);
  await expect(page).toHaveURL(`${baseURL}/`);
  await expect(page.getByTestId('session-list')).toBeVisible();
  const cookies = await page.context().cookies();
  // Chromium takes a Secure (__Host-) cookie from http://127.0.0.1: loopback is a secure context.
  expect(cookies.find((c) => c.name === '__Host-corral_ui')).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: true, path: '/' });
  expect(JSON.stringify(cookies)).not.toContain(apiKey);
  // The same link in another browser context: used already.
  const other = await browser.newContext();
  const again = await (await other.newPage()).goto(printed);
  expect(again?.status()).toBe(401);
  await other.close();
});

test('a page without the link is told to open it; the old key link is refused', async ({ page }) => {
  await page.goto(baseURL);
  await expect(page.getByTestId('auth-required')).toBeVisible();
  const wrong = await page.goto(`${baseURL}/?code=not-a-code`);
  expect(wrong?.status()).toBe(401);
  const old = await page.goto(`${baseURL}/?token=${encodeURIComponent(apiKey)}`);
  expect(old?.status()).toBe(401);
});

test('a session created through the API shows its events live', async ({ page }) => {
  const session = await newSession('live e2e');
  await page.goto(await freshLink());
  const row = page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText('live e2e');
  await row.click();
  await expect(rowsOf(page, 'user.message').first()).toContainText('first message');
  await expect(rowsOf(page, 'agent.message').first()).toContainText('echo: first message');

  // Sent through the API while the page is open: it and the answer appear without a reload.
  await client.beta.sessions.events.send(session.id, {
    events: [{ type: 'user.message', content: [{ type: 'text', text: 'sent from the SDK' }] }],
  });
  await expect(rowsOf(page, 'user.message').nth(1)).toContainText('sent from the SDK');
  await expect(rowsOf(page, 'agent.message').nth(1)).toContainText('echo: sent from the SDK');

  // The page can send one too; the API sees it.
  await page.getByTestId('message-input').fill('typed in the page');
  await page.getByTestId('message-input').press('Enter');
  await expect(rowsOf(page, 'agent.message').nth(2)).toContainText('echo: typed in the page');
  const texts: string[] = [];
  for await (const e of client.beta.sessions.events.list(session.id, { types: ['user.message'] })) {
    if (e.type === 'user.message') texts.push((e.content[0] as { text: string }).text);
  }
  expect(texts).toEqual(['first message', 'sent from the SDK', 'typed in the page']);

  // Rows are in log order with gapless positions.
  const seqs = await page.getByTestId('event-row').evaluateAll((els) => els.map((el) => Number(el.getAttribute('data-seq'))));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));

  // A new session appears in the list live, too.
  const other = await newSession('arrives later');
  await expect(page.locator(`[data-testid="session-row"][data-session-id="${other.id}"]`)).toBeVisible();

  // Reloading keeps the selection (?session=…) and rebuilds the view from the log.
  const count = await page.getByTestId('event-row').count();
  await page.reload();
  await expect(page.getByTestId('event-row')).toHaveCount(count);
});

test('"create hello.txt and show me it": tool calls and the answer stream into the page', async ({ page }) => {
  const session = await newSession('hello file', 'create hello.txt and show me it');
  await page.goto(`${await freshLink()}&session=${session.id}`);
  await expect(page).toHaveURL(`${baseURL}/?session=${session.id}`);
  await expect(rowsOf(page, 'session.status_idle')).toHaveCount(1, { timeout: 20_000 });
  await expect(rowsOf(page, 'agent.tool_use')).toHaveCount(2);
  await expect(rowsOf(page, 'agent.tool_result')).toHaveCount(2);
  await expect(rowsOf(page, 'agent.message').last()).toContainText('hello from corral');

  // The rows read as what happened: the calls with their key arguments, the output's first
  // line with its exit badge, and the hand made ready for the first call.
  const summary = (type: string, n: number) => rowsOf(page, type).nth(n).getByTestId('event-summary');
  await expect(summary('agent.tool_use', 0)).toHaveText('write(hello.txt)');
  await expect(summary('agent.tool_use', 1)).toHaveText('bash(cat hello.txt)');
  await expect(rowsOf(page, 'agent.tool_result').nth(1).getByTestId('event-badge')).toHaveText('exit 0');
  await expect(summary('agent.tool_result', 1)).toContainText(/^hello from corral/);
  await expect(rowsOf(page, 'agent.tool_result').nth(1)).not.toHaveClass(/failed/);
  await expect(rowsOf(page, 'hand.provisioning')).toHaveCount(1);
  await expect(summary('hand.ready', 0)).toHaveText(/^Hand main ready in \d+(\.\d)? m?s · local · this machine, folder \S+ \(sandboxed: /);
  await expect(summary('span.model_request_end', 0)).toContainText(/^in [\d,]+ · out \d+ · cache read \d+/);
  const file = path.join(process.env.E2E_WORK!, session.id, 'hello.txt');
  expect(fs.readFileSync(file, 'utf8')).toBe('hello from corral\n');
});
