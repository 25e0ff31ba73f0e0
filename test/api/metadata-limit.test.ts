import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// The API limits the stored metadata bag to 16 keys. Each patch was checked on its own, so two
// patches of 16 new keys left 32 stored.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => t.call(method, path, body);

const keys = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']));

describe('metadata patches keep the stored bag within 16 keys', () => {
  it.each(['agent', 'environment', 'session', 'vault', 'credential'] as const)('%s', async (kind) => {
    const agent = (await call('POST', '/v1/agents', { name: 'm', model: 'claude-test' })).json;
    const env = (await call('POST', '/v1/environments', { name: 'm', config: { type: 'local' } })).json;
    const vault = (await call('POST', '/v1/vaults', { display_name: 'm' })).json;
    let path: string;
    if (kind === 'agent') path = `/v1/agents/${agent.id}`;
    else if (kind === 'environment') path = `/v1/environments/${env.id}`;
    else if (kind === 'vault') path = `/v1/vaults/${vault.id}`;
    else if (kind === 'session') path = `/v1/sessions/${(await call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json.id}`;
    else {
      const cred = await call('POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'static_bearer', token: 'tok-12345678', mcp_server_url: 'https://mcp.example.com/mcp' } });
      expect(cred.status, JSON.stringify(cred.json)).toBe(200);
      path = `/v1/vaults/${vault.id}/credentials/${cred.json.id}`;
    }
    expect((await call('POST', path, { metadata: keys('a', 16) })).status).toBe(200);
    const over = await call('POST', path, { metadata: keys('b', 16) });
    expect(over.status, JSON.stringify(over.json)).toBe(400);
    expect(over.json.error.message).toMatch(/metadata/);
    expect(Object.keys((await call('GET', path)).json.metadata)).toHaveLength(16);
    // Replacing keys within the limit still works: remove one, add one.
    const swap = await call('POST', path, { metadata: { a0: null, b0: 'v' } });
    expect(swap.status, JSON.stringify(swap.json)).toBe(200);
    expect(Object.keys(swap.json.metadata).sort()).toEqual([...Object.keys(keys('a', 16)).filter((k) => k !== 'a0'), 'b0'].sort());
  });
});
