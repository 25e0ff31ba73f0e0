import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentConfigOf, READ_SESSION_TOOL } from '../../main/brain/agent-config';
import { buildRequest } from '../../main/brain/context';
import { builtinToolDefinitions } from '../../main/brain/tool-definitions';
import { toUiError, uiServiceFor, type UiService } from '../../main/api/ui/service';
import type { UiAgent, UiEnvironment } from '../../main/api/ui/contract';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let ui: UiService;
let agent: UiAgent;
let local: UiEnvironment;
let other: UiEnvironment;

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return { ui: toUiError(err) };
  }
  throw new Error('expected the call to fail');
};

beforeAll(async () => {
  t = await startTestServer();
  ui = uiServiceFor(t.host);
  agent = await ui.call('createAgent', { name: 'ui-agent', model: 'claude-test', system: 'Be brief.', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }] });
  local = await ui.call('createEnvironment', { name: 'here', config: { type: 'local' } });
  other = await ui.call('createEnvironment', { name: 'box', config: { type: 'docker', image: 'busybox:latest' } });
});
afterAll(() => t.close());

describe('host calls of the UI contract', () => {
  it('agents and environments are made, listed and changed with the HTTP API\'s rules', async () => {
    expect(agent).toMatchObject({ name: 'ui-agent', version: 1, model: { id: 'claude-test' }, system: 'Be brief.' });
    expect(agent.tools[0]!.configs!.find((c) => c.name === 'web_fetch')).toMatchObject({ enabled: false, permission_policy: { type: 'always_allow' } });
    const updated = await ui.call('updateAgent', { agentId: agent.id, update: { system: 'Be very brief.', version: 1 } });
    expect(updated).toMatchObject({ version: 2, system: 'Be very brief.' });
    // The same checks as POST /v1/agents/{id}: a stale version is refused.
    expect((await failure(ui.call('updateAgent', { agentId: agent.id, update: { system: 'x', version: 1 } }))).ui?.kind).toBe('invalid_input');
    // The same schema as POST /v1/environments: a bad config is refused with the field named.
    const bad = await failure(ui.call('createEnvironment', { name: 'x', config: { type: 'ssh', host: 'user@host' } }));
    expect(bad.ui).toMatchObject({ kind: 'invalid_input' });
    expect(bad.ui!.message).toMatch(/config\.host/);
    expect((await ui.call('listAgents', {})).map((a) => a.id)).toContain(agent.id);
    expect((await ui.call('listEnvironments', {})).map((e) => e.config.type).sort()).toEqual(['docker', 'local']);
    const renamed = await ui.call('updateEnvironment', { environmentId: other.id, update: { name: 'box2' } });
    expect(renamed).toMatchObject({ name: 'box2', config: { type: 'docker', image: 'busybox:latest' } });
    expect((await failure(ui.call('updateEnvironment', { environmentId: other.id, update: { config: { type: 'local' } } }))).ui?.message).toMatch(/cannot change/);
  });

  it('a new session with extra hands and a first message; events sent; forks listed both ways', async () => {
    const s = await ui.call('createSession', {
      session: { agent: agent.id, environment_id: local.id, title: 'from the window', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] },
      hands: [{ environment_id: other.id, name: 'box' }],
    });
    expect(s).toMatchObject({ title: 'from the window', agent_name: 'ui-agent', status: 'idle' });
    expect(s.hands!.map((h) => `${h.name}:${h.kind}`)).toEqual(['main:local', 'box:docker']);
    const interrupt = await ui.call('sendEvent', { sessionId: s.id, event: { type: 'user.interrupt' } });
    expect(interrupt).toMatchObject({ type: 'user.interrupt', seq: 3 });
    expect((await failure(ui.call('sendEvent', { sessionId: s.id, event: { type: 'agent.message' } }))).ui?.kind).toBe('invalid_input');
    // Nothing is written when a hand's environment is unknown.
    const before = (await ui.call('listSessions', {})).length;
    expect((await failure(ui.call('createSession', { session: { agent: agent.id, environment_id: local.id }, hands: [{ environment_id: 'env_nope', name: 'x' }] }))).ui?.kind).toBe('invalid_input');
    expect(await ui.call('listSessions', {})).toHaveLength(before);

    const preview = await ui.call('previewFork', { sessionId: s.id, atSeq: 1, withMessage: true });
    expect(preview.will_run.join(' ')).toMatch(/Event 1 is shared/);
    expect(preview.will_run.join(' ')).toMatch(/not rewound/);
    const fork = await ui.call('forkSession', {
      sessionId: s.id,
      fork: { at_seq: 2 },
      environmentId: other.id,
      hands: [{ environment_id: local.id, name: 'spare' }],
      message: { type: 'user.message', content: [{ type: 'text', text: 'again, differently' }] },
    });
    expect(fork).toMatchObject({ parent_id: s.id, fork_seq: 2, title: 'from the window · fork at #2', environment_id: other.id });
    expect(fork.hands!.map((h) => `${h.name}:${h.kind}`)).toEqual(['main:docker', 'box:docker', 'spare:local']);
    const forkEvents = await ui.call('getEvents', { sessionId: fork.id });
    expect(forkEvents.map((e) => e.type)).toEqual(['user.message', 'hand.attached', 'hand.attached', 'user.message']);
    expect((await ui.call('getEvents', { sessionId: s.id })).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await ui.call('listForks', { sessionId: s.id })).map((f) => f.id)).toEqual([fork.id]);
    // A name the fork already holds at that point is refused before anything is made.
    expect((await failure(ui.call('forkSession', { sessionId: s.id, fork: { at_seq: 2 }, hands: [{ environment_id: local.id, name: 'box' }] }))).ui?.message).toMatch(/already has a hand named 'box'/);
    expect(await ui.call('listForks', { sessionId: s.id })).toHaveLength(1);
    const res = await fetch(`${t.server.url}/v1/sessions/${s.id}/forks`, { headers: { 'x-api-key': t.apiKey } });
    expect(((await res.json()) as { data: { id: string; forked_from: unknown }[] }).data).toEqual([expect.objectContaining({ id: fork.id, forked_from: { session_id: s.id, seq: 2 } })]);
  });

  it('the model request at a position is the brain\'s own buildRequest, through the UI and over HTTP', async () => {
    const s = await ui.call('createSession', { session: { agent: agent.id, environment_id: local.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'one' }] }] } });
    t.host.log.emitEvents(s.id, [
      { type: 'agent.message', content: [{ type: 'text', text: 'two' }] },
      { type: 'user.message', content: [{ type: 'text', text: 'three' }] },
    ]);
    const view = await ui.call('getModelRequest', { sessionId: s.id, atSeq: 2 });
    const cfg = agentConfigOf(t.host.log.getSession(s.id).record.agent as Record<string, unknown>);
    const expected = buildRequest(t.host.log.getEvents(s.id, { to: 2 }), {
      model: cfg.model,
      system: cfg.system,
      tools: [...builtinToolDefinitions(cfg.builtinTools, t.host.hands.list(s.id)), ...cfg.customTools, READ_SESSION_TOOL],
      maxTokens: cfg.maxTokens,
      contextWindowTokens: cfg.contextWindowTokens,
    });
    expect(view.params).toEqual(expected.params);
    expect(view.context_seq).toBe(2);
    expect(view.params.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(view.params.tools!.map((x) => x.name)).not.toContain('web_fetch');
    const res = await fetch(`${t.server.url}/v1/sessions/${s.id}/model_request?at_seq=3`, { headers: { 'x-api-key': t.apiKey } });
    const body = (await res.json()) as { type: string; context_seq: number; params: { messages: unknown[] } };
    expect(body).toMatchObject({ type: 'model_request', context_seq: 3 });
    expect(body.params.messages).toHaveLength(3);
    const past = await fetch(`${t.server.url}/v1/sessions/${s.id}/model_request?at_seq=99`, { headers: { 'x-api-key': t.apiKey } });
    expect(past.status).toBe(400);
  });

  it('a kept full output is read from its session\'s folder only, also through a fork', async () => {
    const s = await ui.call('createSession', { session: { agent: agent.id, environment_id: local.id } });
    const dir = path.join(t.host.dataDir, 'outputs', s.id);
    fs.mkdirSync(dir, { recursive: true });
    const text = `\u001b[32mgreen\u001b[0m ${'é'.repeat(10)}\n`.repeat(1000);
    fs.writeFileSync(path.join(dir, 'toolu_1.txt'), text);
    const [tr] = t.host.log.emitEvents(s.id, [
      { type: 'agent.tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 'cut' }], details: { full_output: { file: 'toolu_1.txt', chars: text.length } } },
      { type: 'agent.tool_result', tool_use_id: 'y', content: [], details: { full_output: { file: '../../corral.sqlite' } } },
      { type: 'agent.tool_result', tool_use_id: 'z', content: [] },
    ]);
    const all = await ui.call('readFullOutput', { sessionId: s.id, seq: tr!.seq });
    expect(all.text).toBe(text);
    expect(all.next_offset).toBeNull();
    // Pieces never split a character, and join up to the whole.
    let joined = '';
    for (let offset: number | null = 0; offset !== null; ) {
      const piece: { text: string; next_offset: number | null } = await ui.call('readFullOutput', { sessionId: s.id, seq: tr!.seq, offset, length: 1001 });
      joined += piece.text;
      offset = piece.next_offset;
    }
    expect(joined).toBe(text);
    expect((await failure(ui.call('readFullOutput', { sessionId: s.id, seq: tr!.seq + 1 }))).ui?.message).toMatch(/not one of Corral's/);
    expect((await failure(ui.call('readFullOutput', { sessionId: s.id, seq: tr!.seq + 2 }))).ui?.message).toMatch(/no full output/);
    const fork = await ui.call('forkSession', { sessionId: s.id, fork: { at_seq: tr!.seq } });
    expect((await ui.call('readFullOutput', { sessionId: fork.id, seq: tr!.seq })).text).toBe(text);
  });
});
