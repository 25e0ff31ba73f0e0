import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// Requests on one object whose bodies arrive while the others wait for theirs. A handler that
// read the stored state before awaiting its body wrote back a stale copy: all answered 200 and
// only the last change was kept.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => t.call(method, path, body);

/** Sends every request's headers, waits until the server has begun them all, then their bodies. */
async function together(method: string, path: string, bodies: unknown[]): Promise<{ status: number; json: any }[]> {
  const url = new URL(path, t.server.url);
  const reqs = bodies.map((b) => {
    const text = JSON.stringify(b);
    const req = http.request(url, {
      method,
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    });
    req.flushHeaders();
    const answer = new Promise<{ status: number; json: any }>((resolve, reject) => {
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      req.on('error', reject);
    });
    return { req, text, answer };
  });
  await new Promise((r) => setTimeout(r, 300));
  for (const r of reqs) r.req.end(r.text);
  return Promise.all(reqs.map((r) => r.answer));
}

describe('concurrent changes to one object all count', () => {
  it('session resources added at once are all kept, and a clashing mount_path is refused', async () => {
    const agent = (await call('POST', '/v1/agents', { name: 'c', model: 'claude-test' })).json;
    const env = (await call('POST', '/v1/environments', { name: 'c', config: { type: 'local' } })).json;
    const session = (await call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json;
    const path = `/v1/sessions/${session.id}/resources`;
    const added = await together('POST', path, [0, 1, 2].map((i) => ({ type: 'github_repository', url: `https://example.com/r${i}.git` })));
    expect(added.map((a) => a.status)).toEqual([200, 200, 200]);
    const listed = (await call('GET', path)).json.data as { id: string }[];
    expect(listed.map((r) => r.id).sort()).toEqual(added.map((a) => a.json.id).sort());
    const stored = (await call('GET', `/v1/sessions/${session.id}`)).json.resources as { id: string }[];
    expect(stored).toHaveLength(3);

    const same = await together('POST', path, [0, 1].map(() => ({ type: 'github_repository', url: 'https://example.com/dup.git' })));
    expect(same.map((a) => a.status).sort()).toEqual([200, 400]);
    expect((await call('GET', path)).json.data).toHaveLength(4);
  });

  it('metadata patches of a vault and of a credential sent at once are all applied', async () => {
    const vault = (await call('POST', '/v1/vaults', { display_name: 'v' })).json;
    const vaultPatches = await together('POST', `/v1/vaults/${vault.id}`, [{ metadata: { a: '1' } }, { metadata: { b: '2' } }, { metadata: { c: '3' } }]);
    expect(vaultPatches.map((p) => p.status)).toEqual([200, 200, 200]);
    expect((await call('GET', `/v1/vaults/${vault.id}`)).json.metadata).toEqual({ a: '1', b: '2', c: '3' });

    const cred = (await call('POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'static_bearer', token: 'tok-12345678', mcp_server_url: 'https://mcp.example.com/mcp' } })).json;
    const path = `/v1/vaults/${vault.id}/credentials/${cred.id}`;
    const credPatches = await together('POST', path, [{ metadata: { a: '1' } }, { metadata: { b: '2' } }, { metadata: { c: '3' } }]);
    expect(credPatches.map((p) => p.status)).toEqual([200, 200, 200]);
    expect((await call('GET', path)).json.metadata).toEqual({ a: '1', b: '2', c: '3' });
  });

  it("metadata patches of a self-hosted environment's work item sent at once are all applied", async () => {
    const env = (await call('POST', '/v1/environments', { name: 'w', config: { type: 'self_hosted' } })).json;
    const work = (await call('POST', `/v1/environments/${env.id}/work/healthcheck`)).json;
    const path = `/v1/environments/${env.id}/work/${work.id}`;
    const patches = await together('POST', path, [{ metadata: { a: '1' } }, { metadata: { b: '2' } }, { metadata: { c: '3' } }]);
    expect(patches.map((p) => p.status)).toEqual([200, 200, 200]);
    expect((await call('GET', path)).json.metadata).toEqual({ a: '1', b: '2', c: '3' });
  });
});
