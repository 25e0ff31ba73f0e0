import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// `POST /v1/sessions/{id}/events` with several `user.tool_result` events (a self_hosted
// session's answers): a request refused for any of them writes none. Each used to be checked and
// appended in turn, so a bad second result answered 400 with the first already in the log (and
// acted on: the turn went on, and a retry was refused as "already answered").

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => t.call(method, path, body);

const result = (id: string) => ({ type: 'user.tool_result', tool_use_id: id, content: [{ type: 'text', text: 'r' }] });

describe('user.tool_result events sent together', () => {
  it('are all refused when one is, and all taken when all are good', async () => {
    const agent = (await call('POST', '/v1/agents', { name: 'w', model: 'claude-test' })).json;
    const env = (await call('POST', '/v1/environments', { name: 'w', config: { type: 'self_hosted' } })).json;
    const session = (await call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json;
    // Two calls on the session's (self_hosted) main hand, as a brain logs them.
    const [a, b] = t.host.log.emitEvents(session.id, [
      { type: 'agent.tool_use', name: 'read', input: { file_path: 'a' }, evaluated_permission: 'allow' },
      { type: 'agent.tool_use', name: 'read', input: { file_path: 'b' }, evaluated_permission: 'allow' },
    ]);
    const results = () => t.host.log.getEvents(session.id, { types: ['user.tool_result'] });

    const unknown = await call('POST', `/v1/sessions/${session.id}/events`, { events: [result(a!.id), result('sevt_nothing')] });
    expect(unknown.status, JSON.stringify(unknown.json)).toBe(400);
    expect(unknown.json.error.message).toMatch(/events\.1\.tool_use_id/);
    const twice = await call('POST', `/v1/sessions/${session.id}/events`, { events: [result(a!.id), result(a!.id)] });
    expect(twice.status, JSON.stringify(twice.json)).toBe(400);
    expect(twice.json.error.message).toMatch(/events\.1\.tool_use_id/);
    expect(results()).toHaveLength(0);

    const ok = await call('POST', `/v1/sessions/${session.id}/events`, { events: [result(a!.id), result(b!.id)] });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(results().map((e) => e.tool_use_id)).toEqual([a!.id, b!.id]);
  });
});
