import { expect, test } from '@playwright/test';
import { client, freshLink, rowsOf } from './helpers';

test('a local hand whose commands run without a sandbox says so in the timeline and the state panel', async ({ page }) => {
  const agent = await client.beta.agents.create({ name: 'e2e-unsandboxed', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  // Turned off on purpose in the environment's config: the hand must still say so.
  const env = await client.beta.environments.create({ name: 'e2e-no-sandbox', config: { type: 'local', sandbox: false } as never });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: env.id,
    title: 'unsandboxed e2e',
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'create hello.txt' }] }],
  });
  await page.goto(`${await freshLink()}&session=${session.id}`);
  const ready = rowsOf(page, 'hand.ready').first();
  await expect(ready).toBeVisible();
  await expect(ready.getByTestId('event-badge')).toHaveText(/^not sandboxed: /);
  await page.getByRole('tab', { name: 'State' }).click();
  await expect(page.getByTestId('hand-unsandboxed')).toContainText('not sandboxed');
});
