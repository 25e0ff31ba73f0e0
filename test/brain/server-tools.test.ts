import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import type { Reply } from '../fixtures/model-server-types';

/**
 * web_search and web_fetch are the model provider's tools: the request names them in the
 * Messages API's shapes, the host runs nothing for them, and their blocks go back in the next
 * request exactly as the model sent them (the fixture validates the API's pairing rule).
 */

const SEARCH_RESULT = [
  { type: 'web_search_result', url: 'https://example.com/a', title: 'A page', encrypted_content: 'enc-a', page_age: '2 days ago' },
  { type: 'web_search_result', url: 'https://example.com/b', title: 'B page', encrypted_content: 'enc-b', page_age: null },
];
const FETCH_RESULT = {
  type: 'web_fetch_result',
  url: 'https://example.com/a',
  retrieved_at: '2026-11-30T12:00:00Z',
  content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Hello from A.' }, title: 'A page' },
};
/** The blocks as the fixture puts them on the wire (its own shapes, with `caller`). */
const wire = {
  search: { type: 'server_tool_use', id: 'srvtoolu_01search', name: 'web_search', input: { query: 'corral agents' }, caller: { type: 'direct' } },
  searchResult: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01search', content: SEARCH_RESULT, caller: { type: 'direct' } },
  fetch: { type: 'server_tool_use', id: 'srvtoolu_02fetch', name: 'web_fetch', input: { url: 'https://example.com/a' }, caller: { type: 'direct' } },
  fetchResult: { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_02fetch', content: FETCH_RESULT, caller: { type: 'direct' } },
};

let t: BrainTestHost;
beforeAll(async () => {
  t = await startBrainHost();
});
afterAll(() => t.close());

const replyWith = (blocks: Reply extends infer R ? (R extends { blocks: infer B } ? B : never) : never, stop_reason?: 'pause_turn' | 'end_turn' | 'tool_use'): Reply => ({ blocks, ...(stop_reason ? { stop_reason } : {}) });
const searchBlocks = [
  { type: 'server_tool_use' as const, id: wire.search.id, name: 'web_search' as const, input: wire.search.input },
  { type: 'web_search_tool_result' as const, tool_use_id: wire.search.id, content: SEARCH_RESULT },
];
const fetchBlocks = [
  { type: 'server_tool_use' as const, id: wire.fetch.id, name: 'web_fetch' as const, input: wire.fetch.input },
  { type: 'web_fetch_tool_result' as const, tool_use_id: wire.fetch.id, content: FETCH_RESULT },
];

describe('server tools', () => {
  it('offers web_search and web_fetch as server tools, logs their blocks and sends them back exactly, with a hand call in the same reply', async () => {
    t.model.setScript([
      replyWith([{ type: 'text', text: 'Searching.' }, ...searchBlocks, ...fetchBlocks, { type: 'text', text: 'Now a command.' }, { type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }]),
      replyWith([{ type: 'text', text: 'Done.' }]),
    ]);
    const before = t.model.requests.length;
    const id = t.newSession('find corral');
    const events = await t.settled(id);
    const [first, second] = t.model.requests.slice(before).map((r) => r.body);
    expect(t.model.requests.slice(before)).toHaveLength(2);

    // The request carries them in the Messages API's shapes.
    expect(first.tools).toEqual(expect.arrayContaining([{ type: 'web_search_20250305', name: 'web_search' }, { type: 'web_fetch_20250910', name: 'web_fetch' }]));

    // Logged as the Managed Agents types, with Corral's server_block; nothing ran on a hand for them.
    const uses = events.filter((e) => e.type === 'agent.tool_use');
    expect(uses.map((e) => e.name)).toEqual(['web_search', 'web_fetch', 'bash']);
    expect(uses[0]).toMatchObject({ input: { query: 'corral agents' }, model_tool_use_id: wire.search.id, server_block: wire.search });
    expect(uses[0]!.evaluated_permission).toBeUndefined();
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results).toHaveLength(3);
    expect(results[0]).toMatchObject({ tool_use_id: uses[0]!.id, is_error: false, server_block: wire.searchResult });
    expect((results[0]!.content as { text: string }[])[0]!.text).toContain('https://example.com/b');
    expect(results[1]).toMatchObject({ tool_use_id: uses[1]!.id, server_block: wire.fetchResult });
    expect((results[1]!.content as { text: string }[])[0]!.text).toContain('Hello from A.');
    expect(results[2]).toMatchObject({ tool_use_id: uses[2]!.id, is_error: false });
    expect(events.filter((e) => e.type === 'hand.provisioning')).toHaveLength(1); // for bash only

    // The next request: the assistant message holds the server blocks byte-for-byte as sent.
    const assistant = second.messages.at(-2);
    expect(assistant.role).toBe('assistant');
    const types = assistant.content.map((b: { type: string }) => b.type);
    expect(types).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_fetch_tool_result', 'text', 'tool_use']);
    expect(JSON.stringify(assistant.content.slice(1, 5))).toBe(JSON.stringify([wire.search, wire.searchResult, wire.fetch, wire.fetchResult]));
    // Only the hand's call is answered in the user message.
    const user = second.messages.at(-1);
    expect(user.content.map((b: { type: string }) => b.type)).toEqual(['tool_result']);
  });

  it('continues a paused turn (pause_turn) by sending the reply so far back as it came', async () => {
    t.model.setScript([replyWith([...searchBlocks], 'pause_turn'), replyWith([{ type: 'text', text: 'Here is what I found.' }])]);
    const before = t.model.requests.length;
    const id = t.newSession('search only');
    const events = await t.settled(id);
    const requests = t.model.requests.slice(before).map((r) => r.body);
    expect(requests).toHaveLength(2);
    const last = requests[1].messages.at(-1);
    expect(last.role).toBe('assistant');
    expect(JSON.stringify(last.content)).toBe(JSON.stringify([wire.search, wire.searchResult]));
    expect(events.filter((e) => e.type === 'hand.provisioning')).toHaveLength(0);
    expect(events.filter((e) => e.type === 'span.model_request_end').map((e) => e.stop_reason)).toEqual(['pause_turn', 'end_turn']);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  });

  it('answers a server call whose result was cut off with the API-shaped error, so the retry is a valid request', async () => {
    t.model.setScript([{ blocks: [searchBlocks[0]!, { type: 'text', text: 'x' }], cutAfterBlocks: 1 }, replyWith([{ type: 'text', text: 'Retried.' }])]);
    const before = t.model.requests.length;
    const id = t.newSession('cut');
    const events = await t.settled(id);
    const requests = t.model.requests.slice(before).map((r) => r.body);
    expect(requests).toHaveLength(2);
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ is_error: true, server_block: { type: 'web_search_tool_result', tool_use_id: wire.search.id, content: { type: 'web_search_tool_result_error', error_code: 'unavailable' } } });
    expect(requests[1].messages.at(-1).content.map((b: { type: string }) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result']);
  });

  it('an interrupt after a server call but before its result answers it the same way, so the next request is valid', async () => {
    t.model.setScript([
      { blocks: [searchBlocks[0]!, { type: 'text', text: 'a long answer that streams slowly' }, searchBlocks[1]!], chunkDelayMs: 150 },
      replyWith([{ type: 'text', text: 'After the interrupt.' }]),
    ]);
    const before = t.model.requests.length;
    const id = t.newSession('interrupt me');
    const end = Date.now() + 20_000;
    while (!t.events(id).some((e) => e.type === 'agent.tool_use')) {
      if (Date.now() > end) throw new Error('no server call logged');
      await new Promise((r) => setTimeout(r, 20));
    }
    t.host.log.emitEvent(id, { type: 'user.interrupt' });
    await t.settled(id);
    t.host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'go on' }] });
    const events = await t.settled(id);
    expect(events.some((e) => e.type === 'session.error')).toBe(false);
    const requests = t.model.requests.slice(before).map((r) => r.body);
    expect(requests).toHaveLength(2);
    const assistant = requests[1].messages.at(-2);
    expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result']);
    expect(assistant.content[1].content).toEqual({ type: 'web_search_tool_result_error', error_code: 'unavailable' });
  });

  it('does not offer them when turned off, nor under always_ask (the provider would run them without asking)', async () => {
    const offered = async (toolset: Record<string, unknown>) => {
      t.model.setScript([replyWith([{ type: 'text', text: 'ok' }])]);
      const before = t.model.requests.length;
      await t.settled(t.newSession('hi', { tools: [{ type: 'agent_toolset_20260401', ...toolset }] }));
      return (t.model.requests[before]!.body.tools as { name: string }[]).map((x) => x.name);
    };
    expect(await offered({ configs: [{ name: 'web_fetch', enabled: false }] })).toEqual(expect.arrayContaining(['web_search', 'bash']));
    expect(await offered({ configs: [{ name: 'web_fetch', enabled: false }] })).not.toContain('web_fetch');
    const asked = await offered({ default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'web_search', permission_policy: { type: 'always_allow' } }] });
    expect(asked).toContain('web_search');
    expect(asked).not.toContain('web_fetch');
  });
});
