import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from '@playwright/test';
import { baseURL, client, freshLink } from './helpers';

/**
 * A machine that dials in, set up from the window: make a self_hosted environment, make a worker
 * key (shown once, in the command to run), and that key works for the worker protocol, and only
 * for it, through the official SDK.
 */
test('makes a worker key for a self_hosted environment; the key polls for work and nothing more', async ({ page }) => {
  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Environments' }).click();
  await page.getByRole('button', { name: 'New environment' }).click();
  const form = page.getByRole('form', { name: 'New environment' });
  await form.getByLabel('Name').fill('laptop that dials in');
  await form.getByLabel('Kind').selectOption('self_hosted');
  await form.getByRole('button', { name: 'Create environment' }).click();

  const panel = page.getByRole('region', { name: 'Worker keys of laptop that dials in' });
  await panel.getByRole('button', { name: 'Make a worker key' }).click();
  const command = await panel.getByTestId('worker-command').textContent();
  const m = /^CORRAL_ENVIRONMENT_KEY=(corral-envkey-\S+) npx corral-worker --url (\S+) --environment (env_\S+)$/.exec(command ?? '');
  expect(m, command ?? '').not.toBeNull();
  const [, key, url, environmentId] = m!;
  expect(url).toBe(new URL(baseURL).origin);
  const env = await client.beta.environments.retrieve(environmentId!);
  expect(env.config).toMatchObject({ type: 'self_hosted' });

  const worker = new Anthropic({ baseURL: url, apiKey: null, authToken: key, maxRetries: 0 });
  expect(await worker.beta.environments.work.poll(environmentId!)).toBeNull();
  await expect(worker.beta.sessions.list()).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
});
