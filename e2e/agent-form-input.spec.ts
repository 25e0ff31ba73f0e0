import { expect, test } from '@playwright/test';
import { client, freshLink } from './helpers';

/** Bad input in the New agent form is named on the form; nothing is made from it. */
test('custom tools that are not a list, or max tokens that are not a number, are refused on the form', async ({ page }) => {
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Agents' }).click();
  await page.getByRole('button', { name: 'New agent' }).click();
  const form = page.getByRole('form', { name: 'New agent' });
  await form.getByLabel('Name').fill('e2e-bad-input');
  await form.getByLabel('Model').fill('claude-test');

  // One tool, not in a list.
  await form.getByLabel('Custom tools (JSON list)').fill('{"type":"custom","name":"x","input_schema":{"type":"object"}}');
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(form.getByText('custom tools: a JSON list')).toBeVisible();

  await form.getByLabel('Custom tools (JSON list)').fill('[]');
  await form.getByLabel('Max tokens per reply (optional)').fill('lots');
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(form.getByText('max tokens: a whole number')).toBeVisible();

  expect(pageErrors).toEqual([]);
  for await (const a of client.beta.agents.list()) expect(a.name).not.toBe('e2e-bad-input');

  // Fixed, it is made, with the number.
  await form.getByLabel('Max tokens per reply (optional)').fill('2048');
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(page.getByRole('button', { name: 'Edit agent e2e-bad-input' })).toBeVisible();
  const made = [];
  for await (const a of client.beta.agents.list()) if (a.name === 'e2e-bad-input') made.push(a);
  expect(made).toHaveLength(1);
  expect((made[0] as unknown as { max_tokens?: number }).max_tokens).toBe(2048);
});
