import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * Walks the README's table of every agent/session/environment field and event type: each row
 * marked refused must be refused with a 400 naming it, each supported one accepted, each event
 * type marked logged must be written by some code under main/ and none marked never.
 */

const ROOT = path.resolve(__dirname, '../..');
interface Row {
  where: string;
  field: string;
  status: string;
}

function tableRows(): Row[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const body = readme.split('<!-- api-table -->')[1]?.split('<!-- /api-table -->')[0];
  if (!body) throw new Error('README.md has no <!-- api-table --> section');
  return body
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| where') && !l.startsWith('|---'))
    .map((l) => {
      const [where, field, status] = l.split('|').slice(1, 4).map((c) => c.trim());
      return { where: where!, field: field!, status: status! };
    });
}

let t: TestServer;
let agentId: string;
let envId: string;
let sessionId: string;

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.server.url}${url}`, {
    method,
    headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const agent = (extra: Record<string, unknown>) => () => call('POST', '/v1/agents', { name: 'probe', model: 'claude-test', ...extra });
const agentModel = (extra: Record<string, unknown>) => agent({ model: { id: 'claude-test', ...extra } });
const session = (extra: Record<string, unknown>) => () => call('POST', '/v1/sessions', { agent: agentId, environment_id: envId, ...extra });
const sessionUpdate = (extra: Record<string, unknown>) => () => call('POST', `/v1/sessions/${sessionId}`, extra);
const environment = (extra: Record<string, unknown>) => () => call('POST', '/v1/environments', { name: 'probe-env', ...extra });
const send = (event: Record<string, unknown>) => () => call('POST', `/v1/sessions/${sessionId}/events`, { events: [event] });
const text = (s: string) => ({ type: 'user.message', content: [{ type: 'text', text: s }] });
const toolset = (extra: Record<string, unknown>) => agent({ tools: [{ type: 'agent_toolset_20260401', ...extra }] });

/** One request per row that is not about logged events: supported ones must pass, refused ones fail. */
const PROBES: Record<string, () => Promise<{ status: number; json: any }>> = {
  'agent name': agent({ name: 'named' }),
  'agent model': agentModel({}),
  'agent model.effort': agentModel({ effort: 'high' }),
  'agent model.inference_geo': agentModel({ inference_geo: 'us' }),
  'agent model.speed': agentModel({ speed: 'fast' }),
  'agent description': agent({ description: 'd' }),
  'agent system': agent({ system: 's' }),
  'agent tools: agent_toolset_20260401': toolset({}),
  'agent tools: web_search, web_fetch': toolset({ configs: [{ name: 'web_search', enabled: true }, { name: 'web_fetch', enabled: true }] }),
  'agent tools[].configs[].enabled': toolset({ configs: [{ name: 'bash', enabled: false }] }),
  'agent permission_policy: always_allow, always_ask': toolset({ default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', permission_policy: { type: 'always_allow' } }] }),
  'agent permission_policy: auto': toolset({ default_config: { permission_policy: { type: 'auto' } } }),
  'agent tools: mcp_toolset': agent({ mcp_servers: [{ type: 'url', name: 'm', url: 'https://mcp.example.com/mcp' }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'm' }] }),
  'agent mcp_toolset permission_policy: always_ask': agent({
    mcp_servers: [{ type: 'url', name: 'm', url: 'https://mcp.example.com/mcp' }],
    tools: [{ type: 'mcp_toolset', mcp_server_name: 'm', default_config: { permission_policy: { type: 'always_ask' } } }],
  }),
  'agent tools: custom': agent({ tools: [{ type: 'custom', name: 'c', description: 'c', input_schema: { type: 'object' } }] }),
  'agent mcp_servers': agent({ mcp_servers: [{ type: 'url', name: 'm', url: 'https://mcp.example.com/mcp' }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'm' }] }),
  'agent metadata': agent({ metadata: { k: 'v' } }),
  'agent skills': agent({ skills: [{ type: 'anthropic', skill_id: 'xlsx' }] }),
  'agent multiagent': agent({ multiagent: { type: 'coordinator', agents: [] } }),
  'agent execution_identity': agent({ execution_identity: { type: 'aws_role', role_arn: 'arn:aws:iam::1:role/x' } }),
  'agent version': () => call('POST', `/v1/agents/${agentId}`, { version: 1, system: 'v2' }),
  'agent max_tokens, context_window_tokens': agent({ max_tokens: 1000, context_window_tokens: 100_000 }),
  // Overrides name the agent by id: read when the probe runs.
  'session agent': () => session({ agent: { type: 'agent_with_overrides', id: agentId, system: 'x' } })(),
  'session agent.skills': () => session({ agent: { type: 'agent_with_overrides', id: agentId, skills: [{ type: 'anthropic', skill_id: 'xlsx' }] } })(),
  'session environment_id': session({}),
  'session initial_events': session({ initial_events: [text('hi')] }),
  'session metadata': session({ metadata: { k: 'v' } }),
  'session title': session({ title: 't' }),
  'session vault_ids': session({ vault_ids: [] }),
  'session resources: github_repository': session({ resources: [{ type: 'github_repository', url: 'https://example.com/r.git' }] }),
  'session resources[].authorization_token': session({ resources: [{ type: 'github_repository', url: 'https://example.com/r.git', authorization_token: 'ghp_abcdefgh' }] }),
  'session resources: file': session({ resources: [{ type: 'file', file_id: 'file_1' }] }),
  'session resources: memory_store': session({ resources: [{ type: 'memory_store', memory_store_id: 'memstore_1' }] }),
  'session budget': session({ budget: { type: 'limit', max_list_cost: { amount: '1.00', currency: 'USD' } } }),
  'session update title, metadata, vault_ids': sessionUpdate({ title: 'u', metadata: { a: 'b' }, vault_ids: [] }),
  'session update agent': sessionUpdate({ agent: { tools: [{ type: 'agent_toolset_20260401' }] } }),
  'session update budget': sessionUpdate({ budget: { type: 'limit', max_list_cost: { amount: '1.00', currency: 'USD' } } }),
  'session resource add: github_repository': () => call('POST', `/v1/sessions/${sessionId}/resources`, { type: 'github_repository', url: 'https://example.com/added.git' }),
  'session resource add: file': () => call('POST', `/v1/sessions/${sessionId}/resources`, { type: 'file', file_id: 'file_1' }),
  'session resource update: authorization_token': async () => {
    const added = await call('POST', `/v1/sessions/${sessionId}/resources`, { type: 'github_repository', url: 'https://example.com/tok.git' });
    return call('POST', `/v1/sessions/${sessionId}/resources/${added.json.id}`, { authorization_token: 'ghp_abcdefgh' });
  },
  'session resource delete': async () => {
    const added = await call('POST', `/v1/sessions/${sessionId}/resources`, { type: 'github_repository', url: 'https://example.com/del.git' });
    return call('DELETE', `/v1/sessions/${sessionId}/resources/${added.json.id}`);
  },
  'environment name, description, metadata': environment({ description: 'd', metadata: { a: 'b' } }),
  'environment scope: organization': environment({ scope: 'organization' }),
  'environment scope: account': environment({ scope: 'account' }),
  'any call anthropic-beta': async () => {
    const res = await fetch(`${t.server.url}/v1/agents`, { headers: { 'x-api-key': t.apiKey, 'anthropic-beta': 'managed-agents-2026-04-01,files-api-2025-04-14' } });
    return { status: res.status, json: await res.json() };
  },
  'environment config: local, ssh, docker, adb': environment({ config: { type: 'docker', image: 'busybox' } }),
  'environment config: cloud': environment({ config: { type: 'cloud' } }),
  'environment config: self_hosted': environment({ config: { type: 'self_hosted' } }),
  'any call workspace_id': async () => {
    // Through the SDK, which sends it as a header.
    const err = await t.client.beta.agents.list({ workspace_id: 'wrkspc_1' }).catch((e) => e);
    return { status: err.status, json: err.error };
  },
  'event sent user.message': send(text('hello')),
  'event sent source: file': send({ type: 'user.message', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }),
  'event sent user.interrupt': send({ type: 'user.interrupt' }),
  'event sent user.interrupt.session_thread_id': send({ type: 'user.interrupt', session_thread_id: 'sthr_1' }),
  // Confirmations are accepted only for a waiting call (test/api/permissions.test.ts); here the
  // type is known to the door: the 400 is about the call, not about the event type.
  'event sent user.tool_confirmation': send({ type: 'user.tool_confirmation', tool_use_id: 'sevt_none', result: 'allow' }),
  'event sent user.custom_tool_result': send({ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_x', content: [{ type: 'text', text: 'r' }] }),
  'event sent user.tool_result': send({ type: 'user.tool_result', tool_use_id: 'sevt_y', content: [{ type: 'text', text: 'r' }] }),
  'event sent system.message': send({ type: 'system.message', content: [{ type: 'text', text: 'note' }] }),
  'event sent user.define_outcome': send({ type: 'user.define_outcome', description: 'd', rubric: { type: 'text', content: 'r' } }),
};

/** The word of a refused row's field the 400 must name. */
function named(field: string): string {
  const f = field.replace(/`/g, '').replace(/^(add|update): /, (_, verb: string) => (verb === 'add' ? 'resources: ' : ''));
  if (f.startsWith('mcp_toolset ')) return "permission_policy 'always_ask' on an mcp_toolset";
  if (f.startsWith('scope: ')) return `scope '${f.slice('scope: '.length)}'`;
  if (f.startsWith('config: ')) return `config type '${f.slice('config: '.length)}'`;
  const m = /^(?:resources: |source: |permission_policy: )?(.+)$/.exec(f)!;
  if (f.startsWith('resources: ')) return `'${m[1]}'`;
  if (f.startsWith('source: ')) return "source type 'file'";
  if (f.startsWith('permission_policy: ')) return `permission_policy '${m[1]}'`;
  return f.split('.').pop()!;
}

/** Every .ts file under main/, concatenated: where logged event types are written. */
function mainSource(): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(path.join(ROOT, 'main'));
  return out.join('\n');
}

const rows = tableRows();

beforeAll(async () => {
  t = await startTestServer();
  agentId = (await call('POST', '/v1/agents', { name: 'base', model: 'claude-test' })).json.id;
  envId = (await call('POST', '/v1/environments', { name: 'base-env', config: { type: 'local' } })).json.id;
  sessionId = (await call('POST', '/v1/sessions', { agent: agentId, environment_id: envId })).json.id;
});
afterAll(() => t.close());

describe('the README table of fields and event types', () => {
  it('lists every status as supported, refused, logged or never, and has a probe for each request row', () => {
    expect(rows.length).toBeGreaterThan(50);
    for (const r of rows) {
      expect(['supported', 'refused', 'logged', 'never'], `${r.where} ${r.field}`).toContain(r.status);
      if (r.where !== 'event logged') expect(Object.keys(PROBES), 'a probe for this row').toContain(`${r.where} ${r.field.replace(/`/g, '')}`);
    }
  });

  it.each(rows.filter((r) => r.where !== 'event logged').map((r) => [`${r.where} ${r.field.replace(/`/g, '')}`, r] as const))('%s', async (key, r) => {
    const { status, json } = await PROBES[key]!();
    if (r.status === 'refused') {
      expect(status, JSON.stringify(json)).toBe(400);
      expect(json.error.message).toContain(named(r.field));
      expect(json.error.message).toMatch(/not supported by Corral yet|not supported yet|not accepted/);
    } else if (key === 'event sent user.tool_confirmation' || key === 'event sent user.tool_result' || key === 'event sent user.custom_tool_result') {
      // Known to the door; the 400 is about the call (or, for a result, a session with no self-hosted worker).
      expect(status).toBe(400);
      expect(json.error.message).toMatch(/tool_use_id|no call|waiting|self_hosted/i);
      expect(json.error.message).not.toMatch(/not supported/);
    } else {
      expect(status, JSON.stringify(json)).toBe(200);
    }
  });

  it('event types marked logged are written by code under main/, those marked never by none', () => {
    const src = mainSource();
    for (const r of rows.filter((x) => x.where === 'event logged')) {
      for (const type of r.field.split(',').map((s) => s.trim().replace(/`/g, ''))) {
        const written = src.includes(`type: '${type}'`);
        expect(written, `${type} (${r.status})`).toBe(r.status === 'logged');
      }
    }
  });
});
