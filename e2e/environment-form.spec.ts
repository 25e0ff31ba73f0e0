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
