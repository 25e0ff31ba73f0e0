import Anthropic from '@anthropic-ai/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

let t: BrainTestHost;
let server: RunningServer;
afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('live text', () => {
  it('streams event_start / event_delta for a reply before its agent.message, naming its id', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, again and again, while the log waits.';
    t = await startBrainHost([{ blocks: [{ type: 'text', text }], chunkDelayMs: 15 }]);
    server = await startServer(t.host, { port: 0, apiKey: 'k', rendererDir: tmpDir() });
    const client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const env = t.host.environments.create({ name: 'e', config: { type: 'local' }, metadata: {}, description: null });
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-test' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const stream = await client.beta.sessions.events.stream(session.id, { event_deltas: ['agent.message'] });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'talk' }] }] });
    const seen: { type: string; [k: string]: unknown }[] = [];
    for await (const e of stream) {
      seen.push(e as never);
      if (e.type === 'session.status_idle') break;
    }
    const start = seen.find((e) => e.type === 'event_start') as unknown as Anthropic.Beta.Sessions.BetaManagedAgentsStartEvent;
    const deltas = seen.filter((e) => e.type === 'event_delta') as unknown as Anthropic.Beta.Sessions.BetaManagedAgentsDeltaEvent[];
    const message = seen.find((e) => e.type === 'agent.message') as unknown as Anthropic.Beta.Sessions.Events.BetaManagedAgentsAgentMessageEvent;
    expect(start.event).toEqual({ id: message.id, type: 'agent.message' });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.event_id === message.id)).toBe(true);
    expect(deltas.map((d) => d.delta.content.text).join('')).toBe(text);
    // All live text came before the logged event; none of it is in the log.
    expect(seen.indexOf(deltas.at(-1) as never)).toBeLessThan(seen.indexOf(message as never));
    const logged = t.events(session.id).map((e) => e.type);
    expect(logged).not.toContain('event_delta');
    // Without event_deltas, no live text.
    const plain = await fetch(`${server.url}/v1/sessions/${session.id}/events/stream?after_seq=0`, { headers: { 'x-api-key': 'k' } });
    const reader = plain.body!.getReader();
    let body = '';
    while (!body.includes('session.status_idle')) body += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(body).not.toContain('event_delta');
  });

  it('gives a subscriber that arrives mid-reply the text written so far', async () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve';
    t.model.setScript([{ blocks: [{ type: 'text', text }], chunkDelayMs: 300 }]);
    const env = t.host.environments.create({ name: 'e2', config: { type: 'local' }, metadata: {}, description: null });
    const { session } = t.host.log.createSession({ environment_id: env.id, record: { agent: { model: { id: 'm' } } } });
    const early: string[] = [];
    t.host.brains!.subscribeDeltas(session.id, (d) => d.type === 'event_delta' && early.push(d.delta.content.text));
    t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
    while (early.length < 2) await new Promise((r) => setTimeout(r, 10));
    const late: { type: string; text?: string; id?: string }[] = [];
    t.host.brains!.subscribeDeltas(session.id, (d) =>
      late.push(d.type === 'event_start' ? { type: d.type, id: d.event.id } : { type: d.type, text: d.delta.content.text, id: d.event_id }),
    );
    expect(late[0]!.type).toBe('event_start');
    expect(late[1]!.text).toBe(early.join(''));
    await t.settled(session.id);
    expect(late.filter((d) => d.type === 'event_delta').map((d) => d.text).join('')).toBe(text);
  });
});
