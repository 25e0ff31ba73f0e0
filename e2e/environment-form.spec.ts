import { expect, test } from '@playwright/test';
import { baseURL, client, freshLink } from './helpers';

test('saving an environment in the form keeps the settings the form does not show', async ({ page }) => {
  const env = await client.beta.environments.create({
    name: 'env-with-extras',
    config: { type: 'local', sandbox: false, env: { FOO: 'bar' } } as never,
  });
  await page.goto(await freshLink());
  await page.goto(`${baseURL}/?view=environments`);
  await page.getByRole('button', { name: 'Edit environment env-with-extras' }).click();
  const form = page.getByRole('form', { name: 'Environment env-with-extras' });
  await form.getByLabel('Description').fill('only the description changes');
  await form.getByLabel('Work folder', { exact: false }).fill('');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect.poll(async () => (await client.beta.environments.retrieve(env.id)).description).toBe('only the description changes');
  expect((await client.beta.environments.retrieve(env.id)).config).toEqual({ type: 'local', sandbox: false, env: { FOO: 'bar' } });
});

test('saving an agent or an environment says Saved.', async ({ page }) => {
  await client.beta.agents.create({ name: 'e2e-saved-agent', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  await client.beta.environments.create({ name: 'e2e-saved-env', config: { type: 'local' } as never });
  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Agents' }).click();
  await page.getByRole('button', { name: 'Edit agent e2e-saved-agent' }).click();
  await page.getByRole('button', { name: 'Save as a new version' }).click();
  await expect(page.getByRole('form', { name: 'Agent e2e-saved-agent' })).toContainText('(version 2)');
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();

  await page.getByRole('tab', { name: 'Environments' }).click();
  await page.getByRole('button', { name: 'Edit environment e2e-saved-env' }).click();
  const form = page.getByRole('form', { name: 'Environment e2e-saved-env' });
  await form.getByLabel('Description').fill('changed');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  // Another environment's form does not say it.
  await page.getByRole('button', { name: 'New environment' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeHidden();
});
