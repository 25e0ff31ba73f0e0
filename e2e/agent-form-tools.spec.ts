import { expect, test } from '@playwright/test';
import { client, freshLink } from './helpers';

/**
 * The window's New agent form starts with every built-in tool on, web_search and web_fetch
 * included, as the API's agent_toolset_20260401 does (default_config.enabled defaults to true);
 * they used to start off, so an agent made in the window silently lacked them.
 */
test('a new agent made in the window has web_search and web_fetch on unless turned off', async ({ page }) => {
  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Agents' }).click();
  await page.getByRole('button', { name: 'New agent' }).click();
  const form = page.getByRole('form', { name: 'New agent' });
  for (const tool of ['bash', 'edit', 'read', 'write', 'glob', 'grep', 'web_fetch', 'web_search']) {
    await expect(form.getByRole('checkbox', { name: tool, exact: true })).toBeChecked();
  }
  await form.getByLabel('Name').fill('e2e-web-tools');
  await form.getByLabel('Model').fill('claude-test');
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(page.getByRole('button', { name: 'Edit agent e2e-web-tools' })).toBeVisible();

  const made = [];
  for await (const a of client.beta.agents.list()) if (a.name === 'e2e-web-tools') made.push(a);
  expect(made).toHaveLength(1);
  const toolset = made[0]!.tools.find((t) => t.type === 'agent_toolset_20260401') as { configs: { name: string; enabled: boolean }[] };
  const enabled = Object.fromEntries(toolset.configs.map((c) => [c.name, c.enabled]));
  expect(enabled).toMatchObject({ bash: true, web_fetch: true, web_search: true });

  // Turning one off in the form is kept: the default is a default, not a rule.
  await page.getByRole('button', { name: 'New agent' }).click();
  const second = page.getByRole('form', { name: 'New agent' });
  await second.getByLabel('Name').fill('e2e-no-search');
  await second.getByLabel('Model').fill('claude-test');
  await second.getByRole('checkbox', { name: 'web_search', exact: true }).uncheck();
  await second.getByRole('button', { name: 'Create agent' }).click();
  await expect(page.getByRole('button', { name: 'Edit agent e2e-no-search' })).toBeVisible();
  let off: { configs: { name: string; enabled: boolean }[] } | undefined;
  for await (const a of client.beta.agents.list()) if (a.name === 'e2e-no-search') off = a.tools.find((t) => t.type === 'agent_toolset_20260401') as never;
  expect(Object.fromEntries(off!.configs.map((c) => [c.name, c.enabled]))).toMatchObject({ web_search: false, web_fetch: true });
});
