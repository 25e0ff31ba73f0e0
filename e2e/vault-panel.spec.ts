import crypto from 'node:crypto';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { client, freshLink } from './helpers';

/**
 * The vault panel as a user drives it: make a vault, add a credential, see it listed without
 * its value, rotate it, remove it. The values typed go to the host and never come back: the
 * test collects every WebSocket frame the page received and searches them (and the page) for
 * both values, in plain and base64 form.
 */
test('adds, lists, rotates and removes a credential; no value comes back to the page', async ({ page }) => {
  const first = `bearer-first-${crypto.randomBytes(12).toString('hex')}`;
  const second = `bearer-second-${crypto.randomBytes(12).toString('hex')}`;
  const received: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8'))));

  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Vaults' }).click();
  const newVault = page.getByRole('form', { name: 'New vault' });
  await newVault.getByLabel('Vault name').fill('panel vault');
  await newVault.getByRole('button', { name: 'New vault' }).click();
  await expect(page.getByRole('region', { name: 'Vault panel vault' })).toBeVisible();

  const add = page.getByRole('form', { name: 'Add credential' });
  await add.getByLabel('Vault').selectOption({ label: 'panel vault' });
  await add.getByLabel('Kind').selectOption('static_bearer');
  await add.getByLabel('Credential name').fill('docs server');
  await add.getByLabel('MCP server URL').fill('https://mcp.example.test/mcp');
  await add.getByLabel('Secret value').fill(first);
  await add.getByRole('button', { name: 'Add credential' }).click();

  const table = page.getByRole('table', { name: 'Credentials in panel vault' });
  const row = table.getByRole('row', { name: /docs server/ });
  await expect(row).toContainText('static_bearer');
  await expect(row).toContainText('https://mcp.example.test/mcp');
  await expect(row).toContainText('never');
  await expect(add.getByLabel('Secret value')).toHaveValue('');
  await page.screenshot({ path: path.resolve(import.meta.dirname, '..', 'test-results', 'screens', 'vaults.png') });

  // Rotate: a new value goes in; the API sees the credential updated (its value is not shown there either).
  const before = (await client.beta.vaults.list()).data.find((v) => v.display_name === 'panel vault')!;
  const [cred] = (await client.beta.vaults.credentials.list(before.id)).data;
  await row.getByRole('button', { name: 'Rotate docs server' }).click();
  await row.getByLabel('New value for docs server').fill(second);
  await row.getByRole('button', { name: 'Save new value' }).click();
  await expect.poll(async () => (await client.beta.vaults.credentials.retrieve(cred!.id, { vault_id: before.id })).updated_at).not.toBe(cred!.updated_at);
  await expect(table.getByRole('row', { name: /docs server/ })).toContainText('changed');

  // Remove, with a confirmation step.
  await table.getByRole('button', { name: 'Remove docs server' }).click();
  await table.getByRole('button', { name: 'Confirm removal of docs server' }).click();
  await expect(table.getByRole('row', { name: /docs server/ })).toHaveCount(0);
  expect((await client.beta.vaults.credentials.list(before.id)).data).toHaveLength(0);

  // Nothing the page received, nor the page itself, holds either value in any form.
  expect(received.length).toBeGreaterThan(0);
  const all = received.join('\n') + (await page.content());
  for (const v of [first, second]) {
    expect(all).not.toContain(v);
    expect(all).not.toContain(Buffer.from(v).toString('base64').slice(0, 24));
  }
});
