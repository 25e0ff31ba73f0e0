/**
 * MCP through the host, end to end through the official SDK: real servers from npm
 * (server-everything over stdio, and over Streamable HTTP behind a bearer-token check), real
 * brains, the vault's token added by the host, the test model server scripting the calls.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { forkBrain } from '../../main/brain/supervisor';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import { everythingStdioCommand, startGuardedEverything, type GuardedMcpServer } from '../fixtures/mcp-servers';
import type { RecordedRequest } from '../fixtures/model-server';
import { tmpDir } from '../helpers/tmp';

const TOKEN = `mcp-bearer-${crypto.randomBytes(16).toString('hex')}`;
const WRONG = `mcp-wrong-${crypto.randomBytes(16).toString('hex')}`;
/** The API's default for an MCP toolset is always_ask; these sessions run their calls unasked. */
const RUN = { permission_policy: { type: 'always_allow' as const } };

let t: BrainTestHost;
let server: RunningServer;
let client: Anthropic;
let remote: GuardedMcpServer;
let envId: string;
/** Every message between the host and its brains, both ways (JSON), and the brains' pids. */
const brainTraffic: string[] = [];
const brainPids: number[] = [];

/** What the model server answers: the tool calls a test puts in the queue, then a closing text. */
let plan: ((req: RecordedRequest) => { blocks: any[] } | Promise<{ blocks: any[] }>) | undefined;

beforeAll(async () => {
  remote = await startGuardedEverything(TOKEN);
  const entry = path.join(import.meta.dirname, '..', '..', 'main', 'brain', 'entry.ts');
  const spawn = (sessionId: string) => {
    const child = forkBrain(entry, sessionId, ['--import', 'tsx']);
    if (child.pid) brainPids.push(child.pid);
    return {
      ...child,
      pid: child.pid,
      send: (m: Parameters<typeof child.send>[0]) => (brainTraffic.push(JSON.stringify(m)), child.send(m)),
      onMessage: (l: (m: unknown) => void) => child.onMessage((m) => (brainTraffic.push(JSON.stringify(m)), l(m))),
      onExit: child.onExit.bind(child),
      kill: child.kill.bind(child),
    };
  };
  t = await startBrainHost((req) => plan?.(req) ?? { blocks: [{ type: 'text', text: 'done' }] }, { hostOptions: { brains: { spawn } } });
  server = await startServer(t.host, { port: 0, apiKey: 'k', rendererDir: tmpDir() });
  client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  envId = t.host.environments.create({ name: 'mcp', config: { type: 'local' }, metadata: {}, description: null }).id;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await t?.close();
  await remote?.close();
});

async function vaultWith(token: string): Promise<string> {
  const vault = await client.beta.vaults.create({ display_name: `mcp ${token.slice(0, 12)}` });
  await client.beta.vaults.credentials.create(vault.id, { display_name: 'remote bearer', auth: { type: 'static_bearer', mcp_server_url: remote.url, token } });
  return vault.id;
}

async function runSession(agentBody: Record<string, unknown>, vaultIds: string[]): Promise<{ id: string; events: any[] }> {
  const agent = await client.beta.agents.create({ name: 'mcp user', model: 'claude-test', ...agentBody } as never);
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: envId, vault_ids: vaultIds });
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'use your MCP tools' }] }] });
  await t.settled(session.id, 60_000);
  const events: any[] = [];
  for await (const e of client.beta.sessions.events.list(session.id, { limit: 1000 })) events.push(e);
  return { id: session.id, events };
}

const toolNames = (req: RecordedRequest) => ((req.body.tools ?? []) as { name: string }[]).map((x) => x.name);

describe('MCP servers through the host', () => {
  it('serves a stdio and a Streamable HTTP server: tools offered, calls run with the vault token, results logged', async () => {
    const vaultId = await vaultWith(TOKEN);
    const offered: string[][] = [];
    plan = (req) => {
      offered.push(toolNames(req));
      if (offered.length > 1) return { blocks: [{ type: 'text', text: 'all done' }] };
      return {
        blocks: [
          { type: 'tool_use', name: 'mcp__remote__echo', input: { message: 'over http' } },
          { type: 'tool_use', name: 'mcp__local__get-env', input: {} },
        ],
      };
    };
    const { events } = await runSession(
      {
        mcp_servers: [
          { type: 'url', name: 'remote', url: remote.url },
          { type: 'stdio', name: 'local', command: everythingStdioCommand() },
        ],
        tools: [
          { type: 'mcp_toolset', mcp_server_name: 'remote', default_config: RUN },
          { type: 'mcp_toolset', mcp_server_name: 'local', default_config: RUN, configs: [{ name: 'get-sum', enabled: false }] },
        ],
      },
      [vaultId],
    );
    plan = undefined;
    // The model saw both servers' tools under the API's naming, less the one disabled.
    expect(offered[0]).toEqual(expect.arrayContaining(['mcp__remote__echo', 'mcp__remote__get-sum', 'mcp__local__echo', 'mcp__local__get-env']));
    expect(offered[0]).not.toContain('mcp__local__get-sum');
    const uses = events.filter((e) => e.type === 'agent.mcp_tool_use');
    expect(uses.map((e) => [e.mcp_server_name, e.name])).toEqual([
      ['remote', 'echo'],
      ['local', 'get-env'],
    ]);
    const results = events.filter((e) => e.type === 'agent.mcp_tool_result');
    expect(results.map((r) => r.mcp_tool_use_id)).toEqual(uses.map((u) => u.id));
    expect(results[0].is_error).toBe(false);
    expect(results[0].content[0].text).toBe('Echo: over http');
    // The stdio server runs with a clean environment: none of the host's keys.
    expect(results[1].is_error).toBe(false);
    expect(results[1].content[0].text).toContain('PATH');
    expect(results[1].content[0].text).not.toContain('ANTHROPIC_API_KEY');
    // ... and in the local hand's sandbox (wrap() gives it a private TMPDIR; unsandboxed it has none).
    expect(results[1].content[0].text).toMatch(/"TMPDIR": ?"[^"]*corral-mcp-/);
    // The model got the results back as tool_result blocks of its own tool_use ids.
    const second = t.model.requests.at(-1)!.body;
    const resultsSent = second.messages.at(-1).content.filter((b: any) => b.type === 'tool_result');
    expect(resultsSent[0].content[0].text).toBe('Echo: over http');
    // The host sent the vault's token to the server; one ledger event per call.
    expect(remote.seenAuth).toContain(`Bearer ${TOKEN}`);
    const used = events.filter((e) => e.type === 'vault.credential_used');
    expect(used).toHaveLength(1);
    expect(used[0]).toMatchObject({ purpose: 'mcp', target: remote.url, kind: 'static_bearer' });
    // The token is nowhere the brain or a client could read it.
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(JSON.stringify(t.model.requests.map((r) => r.body))).not.toContain(TOKEN);
    // Nor did the brain get it: not in any message either way, nor in a live brain's environment.
    expect(brainTraffic.some((m) => m.includes('mcp__remote__echo'))).toBe(true);
    expect(brainTraffic.join('\n')).not.toContain(TOKEN);
    for (const pid of brainPids) {
      const environ = await fs.promises.readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      expect(environ).not.toContain(TOKEN);
    }
    expect(events.some((e) => e.type === 'session.error')).toBe(false);
  }, 90_000);

  it('a wrong token gives mcp_authentication_failed_error, and the server\'s tools are left out', async () => {
    const vaultId = await vaultWith(WRONG);
    const refusedBefore = remote.refused();
    const offered: string[][] = [];
    plan = (req) => {
      offered.push(toolNames(req));
      return { blocks: [{ type: 'text', text: 'no tools' }] };
    };
    const { events } = await runSession({ mcp_servers: [{ type: 'url', name: 'remote', url: remote.url }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'remote', default_config: RUN }] }, [vaultId]);
    plan = undefined;
    expect(remote.refused()).toBeGreaterThan(refusedBefore);
    const err = events.find((e) => e.type === 'session.error');
    expect(err?.error).toMatchObject({ type: 'mcp_authentication_failed_error', mcp_server_name: 'remote', retry_status: { type: 'terminal' } });
    expect(offered[0]!.some((n) => n.startsWith('mcp__'))).toBe(false);
    expect(JSON.stringify(events)).not.toContain(WRONG);
    expect(events.at(-1).type).toBe('session.status_idle');
  }, 60_000);

  it('a server that cannot start gives mcp_connection_failed_error', async () => {
    const { events } = await runSession(
      { mcp_servers: [{ type: 'stdio', name: 'broken', command: ['/nonexistent/corral-mcp-server'] }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'broken', default_config: RUN }] },
      [],
    );
    const err = events.find((e) => e.type === 'session.error');
    expect(err?.error).toMatchObject({ type: 'mcp_connection_failed_error', mcp_server_name: 'broken' });
    // The message says why: what the shell said about the missing command.
    expect(err.error.message).toContain('/nonexistent/corral-mcp-server');
    expect(events.at(-1).type).toBe('session.status_idle');
  }, 60_000);

  it('an OAuth token the server refuses is refreshed by the vault and the call goes through with the new one', async () => {
    const refreshToken = `refresh-${crypto.randomBytes(12).toString('hex')}`;
    const grants: string[] = [];
    const tokenServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        grants.push(body);
        const ok = new URLSearchParams(body).get('refresh_token') === refreshToken;
        res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 } : { error: 'invalid_grant' }));
      });
    });
    await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
    try {
      const vault = await client.beta.vaults.create({ display_name: 'oauth' });
      await client.beta.vaults.credentials.create(vault.id, {
        display_name: 'remote oauth',
        auth: {
          type: 'mcp_oauth',
          mcp_server_url: remote.url,
          access_token: WRONG,
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          refresh: {
            client_id: 'corral-test',
            refresh_token: refreshToken,
            token_endpoint: `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`,
            token_endpoint_auth: { type: 'none' },
          },
        },
      });
      let n = 0;
      plan = () => (n++ === 0 ? { blocks: [{ type: 'tool_use', name: 'mcp__remote__echo', input: { message: 'after refresh' } }] } : { blocks: [{ type: 'text', text: 'ok' }] });
      const { events } = await runSession({ mcp_servers: [{ type: 'url', name: 'remote', url: remote.url }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'remote', default_config: RUN }] }, [vault.id]);
      plan = undefined;
      expect(grants).toHaveLength(1);
      expect(events.some((e) => e.type === 'session.error')).toBe(false);
      const result = events.find((e) => e.type === 'agent.mcp_tool_result');
      expect(result.content[0].text).toBe('Echo: after refresh');
      expect(events.find((e) => e.type === 'vault.credential_used')).toMatchObject({ kind: 'mcp_oauth', purpose: 'mcp', target: remote.url });
      const all = JSON.stringify(events) + JSON.stringify(t.model.requests.map((r) => r.body));
      for (const v of [TOKEN, WRONG, refreshToken]) expect(all).not.toContain(v);
    } finally {
      tokenServer.close();
    }
  }, 60_000);

  it('refuses an agent whose MCP servers and toolsets do not match (400 naming the field)', async () => {
    const bad = (body: Record<string, unknown>) => client.beta.agents.create({ name: 'bad', model: 'claude-test', ...body } as never);
    await expect(bad({ mcp_servers: [{ type: 'url', name: 'lonely', url: remote.url }] })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("'lonely' is not used by any mcp_toolset") });
    await expect(bad({ tools: [{ type: 'mcp_toolset', mcp_server_name: 'ghost' }] })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('not in mcp_servers') });
    await expect(bad({ mcp_servers: [{ type: 'stdio', name: 'x', command: [] }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'x' }] })).rejects.toMatchObject({ status: 400 });
    // A session's agent overrides and updates are held to the same rule.
    const agent = await client.beta.agents.create({ name: 'plain', model: 'claude-test' });
    await expect(
      client.beta.sessions.create({ agent: { type: 'agent_with_overrides', id: agent.id, mcp_servers: [{ type: 'url', name: 'lonely', url: remote.url }] } as never, environment_id: envId }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("'lonely' is not used by any mcp_toolset") });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: envId });
    await expect(client.beta.sessions.update(session.id, { agent: { tools: [{ type: 'mcp_toolset', mcp_server_name: 'ghost' }] } } as never)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('not in mcp_servers') });
  });

  it('lists a server\'s tools once, and again only after it says they changed', async () => {
    const offered: string[][] = [];
    plan = (req) => {
      offered.push(toolNames(req).filter((n) => n.startsWith('mcp__')));
      if (offered.length === 1) return { blocks: [{ type: 'tool_use', name: 'mcp__chg__add-tool', input: {} }] };
      if (offered.length === 2) return { blocks: [{ type: 'tool_use', name: 'mcp__chg__extra', input: {} }] };
      if (offered.length === 3) return { blocks: [{ type: 'tool_use', name: 'mcp__chg__list-count', input: {} }] };
      return { blocks: [{ type: 'text', text: 'ok' }] };
    };
    const fixture = path.join(import.meta.dirname, '..', 'fixtures', 'mcp-changing-server.mjs');
    const { events } = await runSession({ mcp_servers: [{ type: 'stdio', name: 'chg', command: [process.execPath, fixture] }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'chg', default_config: RUN }] }, []);
    plan = undefined;
    expect(offered[0]).toEqual(['mcp__chg__add-tool', 'mcp__chg__list-count']);
    expect(offered[1]).toContain('mcp__chg__extra');
    const results = events.filter((e) => e.type === 'agent.mcp_tool_result').map((e) => e.content[0].text);
    // Four model requests, each asking the host for the tools: the server was asked twice (at the start, after list_changed).
    expect(results).toEqual(['added', 'extra ran', '2']);
  }, 60_000);

  it('a token rotated mid-session: the call the server refuses reconnects with the vault\'s new value', async () => {
    const rotated = `mcp-rotated-${crypto.randomBytes(16).toString('hex')}`;
    const vaultId = await vaultWith(TOKEN);
    const [cred] = (await client.beta.vaults.credentials.list(vaultId)).data;
    let n = 0;
    plan = async () => {
      n++;
      if (n === 1) return { blocks: [{ type: 'tool_use', name: 'mcp__remote__echo', input: { message: 'before' } }] };
      if (n === 2) {
        // Between the two calls the server and the vault move to a new token (a rotation).
        remote.setToken(rotated);
        await client.beta.vaults.credentials.update(cred!.id, { vault_id: vaultId, auth: { type: 'static_bearer', token: rotated } });
        return { blocks: [{ type: 'tool_use', name: 'mcp__remote__echo', input: { message: 'after' } }] };
      }
      return { blocks: [{ type: 'text', text: 'ok' }] };
    };
    try {
      const { events } = await runSession({ mcp_servers: [{ type: 'url', name: 'remote', url: remote.url }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'remote', default_config: RUN }] }, [vaultId]);
      const results = events.filter((e) => e.type === 'agent.mcp_tool_result').map((e) => [e.is_error, e.content[0].text]);
      expect(results).toEqual([
        [false, 'Echo: before'],
        [false, 'Echo: after'],
      ]);
      expect(remote.seenAuth).toContain(`Bearer ${rotated}`);
      expect(JSON.stringify(events)).not.toContain(rotated);
    } finally {
      plan = undefined;
      remote.setToken(TOKEN);
    }
  }, 60_000);
});
