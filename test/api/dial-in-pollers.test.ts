import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { MAX_POLLERS_KEPT } from '../../main/catalog/work';
import { createApiApp } from '../../main/api/http/app';
import { tmpDir } from '../helpers/tmp';

// Worker ids are chosen by whoever holds an environment key: one inventing a fresh id per poll
// must not grow what the host keeps of them without end, nor store kilobytes per id.

let host: Host | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

describe('workers seen polling', () => {
  it('keeps the most recent pollers of an environment only, however many ids are invented', async () => {
    host = createHost({ dataDir: tmpDir() });
    const env = host.environments.create({ name: 'remote', config: { type: 'self_hosted' }, metadata: {}, description: null });
    const work = host.dialIn.work;
    const n = MAX_POLLERS_KEPT * 4;
    for (let i = 0; i < n; i++) work.notePoll(env.id, `invented-${i}`, 1_000 + i);
    const kept = work.pollers(0, env.id);
    expect(kept.length).toBeLessThanOrEqual(MAX_POLLERS_KEPT * 2);
    expect(kept.length).toBeGreaterThanOrEqual(MAX_POLLERS_KEPT);
    // The newest are the ones kept.
    expect(kept[0]!.worker_id).toBe(`invented-${n - 1}`);
    expect(kept.some((p) => p.worker_id === 'invented-0')).toBe(false);
  });

  it('refuses a worker id longer than 256 characters with a 400 naming the header', async () => {
    host = createHost({ dataDir: tmpDir() });
    await host.started;
    const env = host.environments.create({ name: 'remote', config: { type: 'self_hosted' }, metadata: {}, description: null });
    const { key } = await host.dialIn.createKey(env.id, null);
    const app = createApiApp(host, { apiKey: 'k'.repeat(40), rendererDir: tmpDir() });
    const poll = (id: string) =>
      app.request(`/v1/environments/${env.id}/work/poll`, { headers: { authorization: `Bearer ${key}`, 'anthropic-worker-id': id, 'anthropic-beta': 'managed-agents-2026-04-01' } });
    const long = await poll('w'.repeat(257));
    expect(long.status).toBe(400);
    expect(JSON.stringify(await long.json())).toContain('anthropic-worker-id');
    expect(host.dialIn.work.pollers(0, env.id)).toEqual([]);
    const fine = await poll('w'.repeat(256));
    expect(fine.status).toBe(200);
    expect(host.dialIn.work.pollers(0, env.id).map((p) => p.worker_id)).toEqual(['w'.repeat(256)]);
  });
});
