import { expect, test } from '@playwright/test';
import { client, freshLink } from './helpers';

/**
 * The New session form says to make an agent and an environment on their pages first; going
 * there and coming back finds the form as it was left. Cancel clears it.
 */
test('the New session form keeps what was typed across a trip to another page', async ({ page }) => {
  await client.beta.agents.create({ name: 'e2e-draft-agent', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  await client.beta.environments.create({ name: 'e2e-draft-env', config: { type: 'local' } as never });
  await page.goto(await freshLink());
  await page.getByRole('button', { name: 'New session' }).click();
  const form = page.getByTestId('new-session-form');
  await form.getByLabel('Title').fill('a draft title');
  await form.getByLabel('First message').fill('a long, carefully written first message');

  await page.getByRole('tab', { name: 'Environments' }).click();
  await expect(form).toBeHidden();
  await page.getByRole('tab', { name: 'Sessions' }).click();
  await expect(form.getByLabel('Title')).toHaveValue('a draft title');
  await expect(form.getByLabel('First message')).toHaveValue('a long, carefully written first message');

  await form.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(form.getByLabel('First message')).toHaveValue('');
});
