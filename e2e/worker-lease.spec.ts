import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect, test, type Locator } from '@playwright/test';
import { apiKey, baseURL, client, freshLink } from './helpers';

/**
 * Machines that dial in, seen in the window like any other hand (issue #15): a worker speaking
 * the protocol through the official SDK claims a session's work, and the hands panel and the
 * session's State tab show its work item, worker, lease and heartbeats as they change, without a
 * reload (the UI contract's watchWorkers stream); the session's lane shows the self_hosted hand.
 */
test.setTimeout(90_000);

const at = (cell: Locator) => cell.getAttribute('datetime');
const screens = path.resolve(import.meta.dirname, '..', 'test-results', 'screens');

test("a worker's claim, lease and heartbeats show live in the hands panel and the session view", async ({ page }) => {
  const env = await client.beta.environments.create({ name: 'e2e laptop that dials in', config: { type: 'self_hosted' } as never });
  const made = await fetch(`${baseURL}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: '{}' });
  const { key } = (await made.json()) as { key: string };
  const agent = await client.beta.agents.create({ name: 'e2e-remote', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: env.id,
    title: 'dial-in lease',
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'create hello.txt and show me it' }] }],
  });

  await page.goto(await freshLink());
  await page.getByRole('tab', { name: 'Hands' }).click();
  const panel = page.getByRole('region', { name: 'Machines that dial in' });
  await expect(panel).toContainText('e2e laptop that dials in');
  // The session's first call queued a work item: waiting for a worker.
  const row = panel.locator('[data-testid="work-item"]').filter({ hasText: session.id });
  await expect(row).toHaveAttribute('data-state', 'queued', { timeout: 20_000 });

  // A worker claims it (the SDK's work client, with the environment key).
  const worker = new Anthropic({ baseURL, apiKey: null, authToken: key, maxRetries: 0 }).beta.environments.work;
  const item = (await worker.poll(env.id, { block_ms: 999 }, { headers: { 'anthropic-worker-id': 'e2e-laptop' } }))!;
  expect(item.data).toEqual({ type: 'session', id: session.id });
  await expect(row).toHaveAttribute('data-work-id', item.id);
  // The worker itself shows as a machine polling this environment.
  await expect(panel.getByTestId('dial-in-e2e laptop that dials in').locator('[data-testid="worker-seen"][data-worker-id="e2e-laptop"]')).toBeVisible();
  await expect(row).toContainText('e2e-laptop');
  await worker.ack(item.id, { environment_id: env.id });
  await expect(row).toHaveAttribute('data-state', 'starting');
  const leaseAtAck = await at(row.getByTestId('work-lease'));
  expect(Date.parse(leaseAtAck!)).toBeGreaterThan(Date.now());
  await expect(row.getByTestId('work-heartbeat')).toHaveCount(0);

  // Heartbeats (the item's own secret): each one shows, with the lease it extended.
  const token = (JSON.parse(Buffer.from(item.secret!, 'base64url').toString('utf8')) as { sessions_token: string }).sessions_token;
  const asItem = new Anthropic({ baseURL, apiKey: null, authToken: token, maxRetries: 0 });
  const one = await asItem.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: 60 });
  await expect(row).toHaveAttribute('data-state', 'active');
  await expect(row.getByTestId('work-heartbeat')).toHaveAttribute('datetime', one.last_heartbeat);
  const two = await asItem.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: one.last_heartbeat, desired_ttl_seconds: 120 });
  await expect(row.getByTestId('work-heartbeat')).toHaveAttribute('datetime', two.last_heartbeat);
  await expect.poll(async () => Date.parse((await at(row.getByTestId('work-lease')))!)).toBeGreaterThan(Date.parse(leaseAtAck!) + 30_000);
  await page.screenshot({ path: path.join(screens, 'hands-dial-in.png') });

  // The session view: its lane is the self_hosted hand, and the State tab shows the same lease live.
  await page.goto(`${await freshLink()}&session=${session.id}`);
  const hand = page.getByTestId('state-hands').locator('tr[data-hand="main"]');
  await expect(hand).toContainText('self_hosted');
  await expect(hand).toHaveAttribute('data-state', /ready|busy/);
  const workers = page.getByRole('region', { name: 'Workers of this session' });
  const mine = workers.locator(`[data-testid="work-item"][data-work-id="${item.id}"]`);
  await expect(mine).toHaveAttribute('data-state', 'active');
  await expect(mine.getByTestId('work-heartbeat')).toHaveAttribute('datetime', two.last_heartbeat);
  const three = await asItem.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: two.last_heartbeat });
  await expect(mine.getByTestId('work-heartbeat')).toHaveAttribute('datetime', three.last_heartbeat);
  await page.screenshot({ path: path.join(screens, 'session-workers.png') });

  // The worker answers the calls (as its runner would), the turn ends, and it lets the item go.
  const uses = async () => (await client.beta.sessions.events.list(session.id, { limit: 1000 })).data.filter((e) => e.type === 'agent.tool_use');
  const answer = async (n: number, text: string) => {
    await expect.poll(async () => (await uses()).length, { timeout: 20_000 }).toBeGreaterThan(n);
    const use = (await uses())[n]!.id;
    await asItem.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_result', tool_use_id: use, content: [{ type: 'text', text }] }] });
  };
  await answer(0, 'wrote hello.txt');
  await answer(1, 'hello from a machine that dialled in');
  await expect.poll(async () => (await client.beta.sessions.retrieve(session.id)).status, { timeout: 20_000 }).toBe('idle');
  await asItem.beta.environments.work.stop(item.id, { environment_id: env.id, force: true });
  await expect(mine).toHaveAttribute('data-state', 'stopped');
  await expect(mine).toContainText('stopped by worker');
  await expect(mine.getByTestId('work-lease')).toHaveCount(0);
});
