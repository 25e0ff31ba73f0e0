import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiServiceFor } from '../../main/api/ui/service';
import type { UiWorkerSeen, UiWorkItem } from '../../main/api/ui/workers-contract';
import { startTestServer, type TestServer } from '../helpers/server';

// The window's live view of machines that dial in (the UI contract's watchWorkers stream): a
// worker speaking the protocol through the official SDK, and every step it takes (claim, ack,
// heartbeats, stop) pushed to a watcher as it happens, with the lease and the last heartbeat.

let t: TestServer;
let envId: string;
let otherEnv: string;
let key: string;

beforeAll(async () => {
  t = await startTestServer();
  envId = (await t.client.beta.environments.create({ name: 'laptop', config: { type: 'self_hosted' } as never })).id;
  otherEnv = (await t.client.beta.environments.create({ name: 'ci', config: { type: 'self_hosted' } as never })).id;
  key = (await t.host.dialIn.createKey(envId, null)).key;
});
afterAll(async () => {
  await t?.close();
});

describe('watchWorkers', () => {
  it("pushes an item's whole state at each step a worker takes: claimed, acknowledged, each heartbeat (lease and time), stopped", async () => {
    const before = t.host.dialIn.enqueue(envId, null, 'healthcheck');
    const seen: UiWorkItem[] = [];
    const workers: UiWorkerSeen[] = [];
    const ui = uiServiceFor(t.host);
    const stop = ui.watch('watchWorkers', { environmentId: envId }, (w) => (w.type === 'work_item' ? seen.push(w) : workers.push(w)));
    const otherSeen: unknown[] = [];
    const stopOther = ui.watch('watchWorkers', { environmentId: otherEnv }, (w) => otherSeen.push(w));
    // The first picture: what is there already.
    expect(seen.map((w) => [w.id, w.state, w.environment_name])).toEqual([[before.id, 'queued', 'laptop']]);

    const worker = new Anthropic({ baseURL: t.server.url, apiKey: null, authToken: key, maxRetries: 0 }).beta.environments.work;
    const item = (await worker.poll(envId, {}, { headers: { 'anthropic-worker-id': 'laptop-1' } }))!;
    expect(seen.at(-1)).toMatchObject({ id: item.id, state: 'queued', worker_id: 'laptop-1', lease_expires_at: null });
    // The worker itself, seen polling: a machine ready for work.
    expect(workers).toEqual([{ type: 'worker', environment_id: envId, environment_name: 'laptop', worker_id: 'laptop-1', last_poll_at: expect.any(String) }]);
    await worker.ack(item.id, { environment_id: envId });
    const acked = seen.at(-1)!;
    expect(acked).toMatchObject({ id: item.id, state: 'starting', latest_heartbeat_at: null });
    expect(Date.parse(acked.lease_expires_at!)).toBeGreaterThan(Date.now());

    const token = (JSON.parse(Buffer.from(item.secret!, 'base64url').toString('utf8')) as { sessions_token: string }).sessions_token;
    const asItem = new Anthropic({ baseURL: t.server.url, apiKey: null, authToken: token, maxRetries: 0 }).beta.environments.work;
    const one = await asItem.heartbeat(item.id, { environment_id: envId, expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: 30 });
    expect(seen.at(-1)).toMatchObject({ state: 'active', latest_heartbeat_at: one.last_heartbeat, lease_ttl_s: 30 });
    const leaseAfterOne = seen.at(-1)!.lease_expires_at!;
    const two = await asItem.heartbeat(item.id, { environment_id: envId, expected_last_heartbeat: one.last_heartbeat, desired_ttl_seconds: 40 });
    expect(seen.at(-1)).toMatchObject({ state: 'active', latest_heartbeat_at: two.last_heartbeat, lease_ttl_s: 40 });
    expect(Date.parse(seen.at(-1)!.lease_expires_at!)).toBeGreaterThan(Date.parse(leaseAfterOne));

    await t.client.beta.environments.work.stop(item.id, { environment_id: envId, force: true });
    expect(seen.at(-1)).toMatchObject({ id: item.id, state: 'stopped', stop_reason: 'stopped_by_api', lease_expires_at: null });
    // Another environment's watcher saw none of it; after unsubscribing, nothing more arrives.
    expect(otherSeen).toEqual([]);
    stop();
    stopOther();
    const n = seen.length;
    const late = t.host.dialIn.enqueue(envId, null, 'healthcheck');
    expect(seen.length).toBe(n);
    t.host.dialIn.work.stop(late.id, true, 'stopped_by_api', Date.now());
  });

  it('a lease that runs out is pushed as stopped (lease_expired) once it is noticed', async () => {
    const row = t.host.dialIn.enqueue(envId, null, 'healthcheck');
    const worker = new Anthropic({ baseURL: t.server.url, apiKey: null, authToken: key, maxRetries: 0 }).beta.environments.work;
    const item = (await worker.poll(envId))!;
    expect(item.id).toBe(row.id);
    await worker.ack(item.id, { environment_id: envId });
    const seen: UiWorkItem[] = [];
    const stop = uiServiceFor(t.host).watch('watchWorkers', {}, (w) => w.type === 'work_item' && seen.push(w));
    expect(seen.find((w) => w.id === item.id)?.state).toBe('starting');
    // The sweep as a poll, heartbeat or waiting call runs it, a moment after the lease's end.
    t.host.dialIn.work.expireLeases(Date.now() + 10 * 60_000);
    expect(seen.at(-1)).toMatchObject({ id: item.id, state: 'stopped', stop_reason: 'lease_expired' });
    stop();
  });

  it("a session's view gets its items only, never the workers polling", async () => {
    const agent = await t.client.beta.agents.create({ name: 'a', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: envId } as never);
    const got: { type: string; session_id?: string | null }[] = [];
    const stop = uiServiceFor(t.host).watch('watchWorkers', { sessionId: session.id }, (w) => got.push(w));
    const mine = t.host.dialIn.enqueue(envId, session.id, 'session', 'main');
    t.host.dialIn.enqueue(envId, null, 'healthcheck');
    await new Anthropic({ baseURL: t.server.url, apiKey: null, authToken: key, maxRetries: 0 }).beta.environments.work.poll(envId, {}, { headers: { 'anthropic-worker-id': 'laptop-2' } });
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((w) => w.type === 'work_item' && w.session_id === session.id)).toBe(true);
    expect(got.some((w) => (w as UiWorkItem).id === mine.id)).toBe(true);
    stop();
  });

  it('refuses a filter it does not know', () => {
    expect(() => uiServiceFor(t.host).watch('watchWorkers', { environment: envId }, () => {})).toThrow();
  });
});
