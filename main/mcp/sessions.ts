/**
 * The host's MCP client for every session: one connection per session and server, opened when
 * the session's brain first asks for its tools and closed when that brain goes. A server that
 * cannot be reached or refuses the credential is reported once per connection attempt as a
 * `session.error` (`mcp_connection_failed_error` / `mcp_authentication_failed_error`, as in the
 * API) and its tools are left out; the session goes on with the rest.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { capForModel } from '../hands/output-cap';
import type { ToolOutcome } from '../hands/types';
import type { SessionLog } from '../session/store';
import type { Vault } from '../vault';
import { mcpServersOf, type McpServerSpec, type McpServerUse } from './config';
import { isAuthFailure, McpConnection, McpServerError, type McpAuth } from './connection';
import { mcpModelToolName, type McpToolDefinition } from './names';
import type { StdioSandboxOptions } from './stdio-sandbox';

export interface McpSessionsOptions {
  /** The session log (the host's redacting view): agent snapshots are read and errors written here. */
  log: SessionLog;
  vault: Vault;
  /** How stdio servers run (the local hand's sandbox, unless the host turned it off). */
  sandbox: StdioSandboxOptions;
}

interface SessionServers {
  /** The agent snapshot's MCP part these were made from (a session update may change it). */
  sig: string;
  uses: McpServerUse[];
  /** Per server name: its connection, or why there is none. */
  connections: Map<string, Promise<McpConnection | McpServerError>>;
}

export class McpSessions {
  private readonly sessions = new Map<string, SessionServers>();

  constructor(private readonly opts: McpSessionsOptions) {}

  /** The enabled tools of every server the session's agent uses, connecting to them first. */
  async tools(sessionId: string): Promise<McpToolDefinition[]> {
    const s = this.session(sessionId);
    const lists = await Promise.all(
      s.uses.map(async (use) => {
        const conn = await this.connection(sessionId, s, use.server);
        if (conn instanceof McpServerError) return [];
        let tools: Tool[];
        try {
          tools = await conn.listTools();
        } catch (err) {
          this.report(sessionId, new McpServerError('mcp_connection_failed_error', use.server.name, `listing the tools of MCP server '${use.server.name}' failed: ${(err as Error).message}`));
          return [];
        }
        return tools.filter((t) => use.enabled(t.name)).map((t) => definition(use.server.name, t));
      }),
    );
    return lists.flat();
  }

  /** Runs one tool call on its server; failures are the call's error result, not a throw. */
  async call(sessionId: string, serverName: string, tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const s = this.session(sessionId);
    const use = s.uses.find((u) => u.server.name === serverName);
    if (!use) return { content: `No MCP server named '${serverName}' in this session's agent.`, isError: true };
    if (!use.enabled(tool)) return { content: `The tool '${tool}' of MCP server '${serverName}' is not enabled for this agent.`, isError: true };
    for (let attempt = 0; ; attempt++) {
      const conn = await this.connection(sessionId, s, use.server);
      if (conn instanceof McpServerError) return { content: `${conn.type}: ${conn.message}`, isError: true, details: { error_type: conn.type } };
      try {
        const res = await conn.callTool(tool, input, signal);
        return outcomeOf(res as CallResult);
      } catch (err) {
        // A token that expired mid-session: connect again once (the vault refreshes an OAuth
        // token near expiry, and after a 401); the call had not run (the server refused it).
        if (attempt === 0 && isAuthFailure(err) && !signal.aborted && s.connections.get(use.server.name)) {
          s.connections.delete(use.server.name);
          void conn.close();
          continue;
        }
        return { content: `The MCP call failed: ${this.opts.vault.redactText((err as Error).message ?? String(err))}`, isError: true };
      }
    }
  }

  /** Closes a session's connections (its brain is gone; a new one connects again). */
  async closeSession(sessionId: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    this.sessions.delete(sessionId);
    await Promise.all([...s.connections.values()].map(async (p) => {
      const c = await p;
      if (c instanceof McpConnection) await c.close();
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.closeSession(id)));
  }

  private session(sessionId: string): SessionServers {
    const agent = this.opts.log.getSession(sessionId).record.agent as Record<string, unknown> | undefined;
    const sig = JSON.stringify([agent?.mcp_servers ?? [], ((agent?.tools ?? []) as { type?: string }[]).filter((t) => t.type === 'mcp_toolset')]);
    let s = this.sessions.get(sessionId);
    if (s && s.sig !== sig) {
      // The session's agent changed (POST /v1/sessions/{id}): its old connections go.
      void this.closeSession(sessionId);
      s = undefined;
    }
    if (!s) {
      s = { sig, uses: mcpServersOf(agent), connections: new Map() };
      this.sessions.set(sessionId, s);
    }
    return s;
  }

  private connection(sessionId: string, s: SessionServers, server: McpServerSpec): Promise<McpConnection | McpServerError> {
    let p = s.connections.get(server.name);
    if (!p) {
      p = (async () => {
        try {
          return await McpConnection.open(server, await this.authFor(sessionId, server), this.opts.sandbox);
        } catch (err) {
          const e = err instanceof McpServerError ? err : new McpServerError('mcp_connection_failed_error', server.name, String((err as Error).message ?? err));
          this.report(sessionId, e);
          return e;
        }
      })();
      s.connections.set(server.name, p);
    }
    return p;
  }

  /** The session's credential for a URL server (static_bearer or mcp_oauth whose URL matches). */
  private async authFor(sessionId: string, server: McpServerSpec): Promise<McpAuth | undefined> {
    if (server.type !== 'url') return undefined;
    const cred = await this.opts.vault.resolve(sessionId, { use: 'mcp', server_url: server.url });
    if (!cred) return undefined;
    const secret = cred.secret as { token?: string; access_token?: string };
    const auth: McpAuth = { token: secret.token ?? secret.access_token ?? '', recordUse: (target) => cred.recordUse(target) };
    const info = cred.credential.auth as { type: string; refresh?: unknown };
    if (info.type === 'mcp_oauth' && info.refresh) {
      auth.refresh = async () => {
        await this.opts.vault.refreshOAuth(cred.credential.vault_id, cred.credential.id);
        const again = await this.opts.vault.resolve(sessionId, { use: 'mcp', server_url: server.url });
        return (again?.secret as { access_token?: string } | undefined)?.access_token ?? '';
      };
    }
    return auth;
  }

  private report(sessionId: string, err: McpServerError): void {
    try {
      this.opts.log.emitEvent(sessionId, {
        type: 'session.error',
        error: { type: err.type, mcp_server_name: err.serverName, message: this.opts.vault.redactText(err.message), retry_status: { type: 'terminal' } },
      });
    } catch (e) {
      console.warn(`corral: mcp: could not report ${err.type} in ${sessionId}: ${(e as Error).message}`);
    }
  }
}

function definition(server: string, t: Tool): McpToolDefinition {
  return {
    name: mcpModelToolName(server, t.name),
    mcp_server_name: server,
    tool_name: t.name,
    description: (t.description ?? t.title ?? '').slice(0, 10_000),
    input_schema: { ...(t.inputSchema as Record<string, unknown>), type: 'object' },
  };
}

type CallResult = { content?: { type: string; text?: string; data?: string; mimeType?: string; resource?: { uri?: string; text?: string } ; uri?: string }[]; isError?: boolean; structuredContent?: unknown };

/** An MCP result as a tool outcome: text kept (capped for the model), PNG/JPEG images passed on. */
function outcomeOf(res: CallResult): ToolOutcome {
  const texts: string[] = [];
  const images: NonNullable<ToolOutcome['images']> = [];
  for (const c of res.content ?? []) {
    if (c.type === 'text' && typeof c.text === 'string') texts.push(c.text);
    else if (c.type === 'image' && (c.mimeType === 'image/png' || c.mimeType === 'image/jpeg') && c.data) images.push({ media_type: c.mimeType, data: c.data });
    else if (c.type === 'resource' && c.resource) texts.push(c.resource.text ?? `[resource ${c.resource.uri ?? ''}]`);
    else if (c.type === 'resource_link') texts.push(`[resource ${c.uri ?? ''}]`);
    else texts.push(`[${c.type} content]`);
  }
  if (texts.length === 0 && res.structuredContent !== undefined) texts.push(JSON.stringify(res.structuredContent));
  const capped = capForModel(texts.join('\n'));
  return { content: capped.content, isError: res.isError === true, ...(images.length ? { images } : {}) };
}
