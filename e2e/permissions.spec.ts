import { expect, test } from '@playwright/test';
import { client, freshLink, rowsOf } from './helpers';

/** A session of an agent whose tools all ask first, waiting on its one call. */
async function waitingSession(title: string) {
  const agent = await client.beta.agents.create({
    name: 'asking-agent',
    model: 'claude-test',
    tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }],
  });
  const env = await client.beta.environments.create({ name: 'e2e-env', config: { type: 'local' } as never });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: env.id,
    title,
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'ask before running it' }] }],
  });
  for (let i = 0; i < 200; i++) {
    if ((await client.beta.sessions.retrieve(session.id)).status === 'idle') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return session;
}

test('a call waiting for the user: marked in the list, shows its command, Allow runs it', async ({ page }) => {
  const session = await waitingSession('asks first (allow)');
  await page.goto(await freshLink());
  const row = page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`);
  await expect(row.getByTestId('waiting-badge')).toBeVisible();
  await row.click();
  const call = page.getByTestId('pending-call');
  await expect(call.getByTestId('pending-call-target')).toHaveText('echo allowed-by-the-user');
  await call.getByTestId('allow-call').click();
  await expect(page.getByTestId('pending-calls')).toHaveCount(0);
  await expect(rowsOf(page, 'agent.message').last()).toContainText('allowed-by-the-user');
  await expect(row.getByTestId('waiting-badge')).toHaveCount(0);
});

test('Deny with a reason: the call does not run and the model is told why', async ({ page }) => {
  const session = await waitingSession('asks first (deny)');
  await page.goto(await freshLink());
  await page.locator(`[data-testid="session-row"][data-session-id="${session.id}"]`).click();
  const call = page.getByTestId('pending-call');
  await call.getByTestId('deny-reason').fill('not today');
  await call.getByTestId('deny-call').click();
  await expect(page.getByTestId('pending-calls')).toHaveCount(0);
  await expect(rowsOf(page, 'agent.message').last()).toContainText('not today');
  await expect(rowsOf(page, 'agent.message').last()).not.toContainText('allowed-by-the-user');
});
