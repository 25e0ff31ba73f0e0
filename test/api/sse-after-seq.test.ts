import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// `GET …/events/stream?after_seq=N` past the session's last event used to be taken: the stream
// then skipped every new event up to N, silent while the session ran. It is a 400 now, like
// model_request's at_seq; a position within the log still resumes after it.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ heartbeatMs: 100 });
});
afterAll(() => t.close());

describe('the SSE stream after_seq', () => {
  it('refuses a position past the end and resumes after one within it', async () => {
    const agent = await t.client.beta.agents.create({ name: 's', model: 'claude-test' });
    const env = await t.client.beta.environments.create({ name: 's', config: { type: 'local' } as never });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const [first, second] = t.host.log.emitEvents(session.id, [
      { type: 'system.message', content: [{ type: 'text', text: 'one' }] },
      { type: 'system.message', content: [{ type: 'text', text: 'two' }] },
    ]);
    const url = (n: number) => `${t.server.url}/v1/sessions/${session.id}/events/stream?after_seq=${n}`;
    const past = await fetch(url(second!.seq + 5), { headers: { 'x-api-key': t.apiKey } });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { message: string } }).error.message).toMatch(/after_seq/);

    const res = await fetch(url(first!.seq), { headers: { 'x-api-key': t.apiKey } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(second!.id)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).not.toContain(`id: ${first!.id}`);
  });
});
