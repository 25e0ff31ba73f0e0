import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { everythingStdioCommand } from '../fixtures/mcp-servers';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

// MCP tools under permission policies, as the API has them: an mcp_toolset's tools ask first
// unless its default_config or a tool's config says always_allow; the confirmation flow is the
// built-in tools' (user.tool_confirmation allow / deny).

let t: BrainTestHost;
let server: RunningServer;
let client: Anthropic;
let envId: string;

/** The model calls the stdio server's echo tool once, then reports what it got. */
function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { content: string | { type: string; content?: { text: string }[]; is_error?: boolean }[] }[];
  const last = msgs[msgs.length - 1]!.content;
  const result = typeof last === 'string' ? undefined : last.find((b) => b.type === 'tool_result');
  if (result) return { blocks: [{ type: 'text', text: `got ${result.is_error ? 'ERR' : 'OK'}: ${(result.content ?? []).map((c) => c.text).join('')}` }] };
  return { blocks: [{ type: 'tool_use', name: 'mcp__local__echo', input: { message: 'hello mcp' } }] };
}

beforeAll(async () => {
  t = await startBrainHost(script);
  server = await startServer(t.host, { port: 0, apiKey: 'k', rendererDir: tmpDir() });
  client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  envId = t.host.environments.create({ name: 'mcp', config: { type: 'local' }, metadata: {}, description: null }).id;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await t?.close();
});

type Ev = { id: string; type: string; [k: string]: any };
async function events(id: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(id, { limit: 1000 })) out.push(e as Ev);
  return out;
}

async function start(toolset: Record<string, unknown>): Promise<{ id: string; log: Ev[]; agent: any }> {
  const agent = await client.beta.agents.create({
    name: 'mcp perms',
    model: 'claude-test',
    mcp_servers: [{ type: 'stdio', name: 'local', command: everythingStdioCommand() }],
    tools: [{ type: 'mcp_toolset', mcp_server_name: 'local', ...toolset }],
  } as never);
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: envId });
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'echo something' }] }] });
  return { id: session.id, log: await t.settled(session.id, 60_000).then(() => events(session.id)), agent };
}

const idleReason = (log: Ev[]) => [...log].reverse().find((e) => e.type === 'session.status_idle')?.stop_reason;
const finalText = (log: Ev[]) => ((log.filter((e) => e.type === 'agent.message').at(-1)?.content ?? []) as { text: string }[]).map((c) => c.text).join('');

describe('permission policies for MCP tools', () => {
  it("an mcp_toolset without a policy asks first (the API's default): nothing runs until the user allows it", async () => {
    const { id, log, agent } = await start({});
    expect(agent.tools[0].default_config.permission_policy).toEqual({ type: 'always_ask' });
    const use = log.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use).toMatchObject({ name: 'echo', mcp_server_name: 'local', evaluated_permission: 'ask', evaluation: { type: 'always_ask' } });
    expect(idleReason(log)).toEqual({ type: 'requires_action', event_ids: [use.id] });
    expect(log.some((e) => e.type === 'agent.mcp_tool_result')).toBe(false);

    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] });
    await t.settled(id, 60_000);
    const after = await events(id);
    const result = after.find((e) => e.type === 'agent.mcp_tool_result' && e.mcp_tool_use_id === use.id)!;
    expect(result.is_error).toBe(false);
    expect(JSON.stringify(result.content)).toContain('hello mcp');
    expect(finalText(after)).toMatch(/^got OK: .*hello mcp/);
  }, 90_000);

  it('a denied call does not run, and the model gets the reason', async () => {
    const { id, log } = await start({ default_config: { permission_policy: { type: 'always_ask' } } });
    const use = log.find((e) => e.type === 'agent.mcp_tool_use')!;
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny', deny_message: 'not now' }] });
    await t.settled(id, 60_000);
    const after = await events(id);
    const result = after.find((e) => e.type === 'agent.mcp_tool_result' && e.mcp_tool_use_id === use.id)!;
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result.content)).toContain('not now');
    expect(JSON.stringify(result.content)).not.toContain('hello mcp');
  }, 90_000);

  it("a tool's own always_allow config runs it unasked (over an always_ask default)", async () => {
    const { log } = await start({ default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'echo', permission_policy: { type: 'always_allow' } }] });
    const use = log.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use).toMatchObject({ evaluated_permission: 'allow', evaluation: { type: 'always_allow' } });
    expect(log.find((e) => e.type === 'agent.mcp_tool_result' && e.mcp_tool_use_id === use.id)?.is_error).toBe(false);
    expect(idleReason(log)).toEqual({ type: 'end_turn' });
  }, 90_000);

  it("the toolset's always_allow default runs every tool unasked", async () => {
    const { log } = await start({ default_config: { permission_policy: { type: 'always_allow' } } });
    const use = log.find((e) => e.type === 'agent.mcp_tool_use')!;
    expect(use.evaluated_permission).toBe('allow');
    expect(finalText(log)).toMatch(/^got OK: .*hello mcp/);
  }, 90_000);
});
