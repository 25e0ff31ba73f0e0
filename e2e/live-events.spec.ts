import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from '@playwright/test';

const baseURL = process.env.E2E_BASE_URL!;
const apiKey = process.env.E2E_API_KEY!;
const client = new Anthropic({ apiKey, baseURL, maxRetries: 0 });

async function newSession(title: string) {
  const agent = await client.beta.agents.create({ name: 'e2e-agent', model: 'claude-sonnet-4-5' });
  const env = await client.beta.environments.create({ name: 'e2e-env', config: { type: 'local' } as never });
  return client.beta.sessions.create({
    agent: agent.id,
    environment_id: env.id,
    title,
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'first message' }] }],
  });
}

test('the printed link authorises the page and drops the key from the address bar', async ({ page }) => {
  await page.goto(`/?token=${encodeURIComponent(apiKey)}`);
  await expect(page).toHaveURL(/\/$/);
  expect(page.url()).not.toContain(apiKey);
  await expect(page.getByTestId('session-list')).toBeVisible();
  const cookies = await page.context().cookies();
  expect(cookies.find((c) => c.name === 'corral_ui')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  expect(JSON.stringify(cookies)).not.toContain(apiKey);
});

test('a page without the link is told to open it', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('auth-required')).toBeVisible();
  const wrong = await page.goto('/?token=not-the-key');
  expect(wrong?.status()).toBe(401);
});

test('a session created through the API shows its events live', async ({ page }) => {
  const session = await newSession('live e2e');
  await page.goto(`/?token=${encodeURIComponent(apiKey)}`);
  const row = page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText('live e2e');
  await row.click();
  const events = page.getByTestId('event-row');
  await expect(events).toHaveCount(1);
  await expect(events.first()).toHaveAttribute('data-type', 'user.message');

  // Sent through the API while the page is open: it appears without a reload.
  await client.beta.sessions.events.send(session.id, {
    events: [{ type: 'user.message', content: [{ type: 'text', text: 'sent from the SDK' }] }],
  });
  await expect(page.locator('[data-testid="event-row"][data-seq="2"]')).toContainText('sent from the SDK');

  // And the page can send one too; the API sees it.
  await page.getByRole('textbox').fill('typed in the page');
  await page.getByRole('textbox').press('Enter');
  await expect(page.locator('[data-testid="event-row"][data-seq="3"]')).toContainText('typed in the page');
  const listed = await client.beta.sessions.events.list(session.id);
  expect(listed.data.map((e) => (e.type === 'user.message' ? (e.content[0] as { text: string }).text : e.type))).toEqual([
    'first message',
    'sent from the SDK',
    'typed in the page',
  ]);

  // A new session appears in the list live, too.
  const other = await newSession('arrives later');
  await expect(page.locator(`[data-testid="session-row"][data-session-id="${other.id}"]`)).toBeVisible();

  // Reloading keeps the selection (?session=…) and rebuilds the view from the log.
  await page.reload();
  await expect(page.locator('[data-testid="event-row"][data-seq="3"]')).toBeVisible();
});
