import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// Deleting a session ends its open SSE streams with a `session.deleted` frame. A session no fork
// depends on has its events purged in the same transaction, and the deleted event was read back
// after the purge (nothing): no subscriber heard of it, and its streams went on sending pings.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ heartbeatMs: 100 });
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => t.call(method, path, body);

/** Reads the stream until it ends or `ms` pass; the text read and whether it ended by itself. */
async function readStream(res: Response, ms: number): Promise<{ text: string; ended: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) {
      await reader.cancel();
      return { text, ended: false };
    }
    const next = await Promise.race([reader.read(), new Promise<'late'>((r) => setTimeout(() => r('late'), left))]);
    if (next === 'late') continue;
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value, { stream: true });
  }
}

describe('the SSE stream of a deleted session', () => {
  it.each([
    ['no fork depends on it (its events are purged)', false],
    ['a fork depends on it (its events are kept)', true],
  ])('gets session.deleted and ends: %s', async (_, withFork) => {
    const agent = (await call('POST', '/v1/agents', { name: 'd', model: 'claude-test' })).json;
    const env = (await call('POST', '/v1/environments', { name: 'd', config: { type: 'local' } })).json;
    const session = (await call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json;
    t.host.log.emitEvent(session.id, { type: 'system.message', content: [{ type: 'text', text: 'kept for a fork' }] });
    if (withFork) expect((await call('POST', `/v1/sessions/${session.id}/fork`, {})).status).toBe(200);
    const res = await fetch(`${t.server.url}/v1/sessions/${session.id}/events/stream`, { headers: { 'x-api-key': t.apiKey } });
    expect(res.status).toBe(200);
    const reading = readStream(res, 3000);
    await new Promise((r) => setTimeout(r, 200));
    expect((await call('DELETE', `/v1/sessions/${session.id}`)).status).toBe(200);
    const { text, ended } = await reading;
    expect(text).toContain('event: session.deleted');
    expect(ended).toBe(true);
  });
});
