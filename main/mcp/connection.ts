/**
 * One MCP connection: a session's client of one server, over Streamable HTTP (with the vault's
 * bearer or OAuth token added here, in the host) or stdio (a command the host runs). Its tool
 * list is read once and kept until the server says it changed (`notifications/tools/list_changed`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { CORRAL_VERSION } from '../version';
import type { McpServerSpec } from './config';
import { launchStdio, type StdioSandboxOptions } from './stdio-sandbox';

/** Why a server could not be used, as the API names it. */
export class McpServerError extends Error {
  override readonly name = 'McpServerError';
  constructor(
    readonly type: 'mcp_connection_failed_error' | 'mcp_authentication_failed_error',
    readonly serverName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The token the host adds to a URL server's requests (never seen by the brain or the log). */
export interface McpAuth {
  token: string;
  /** Records one use in the ledger (`vault.credential_used`, purpose mcp). */
  recordUse(target: string): void;
  /** For `mcp_oauth` with refresh: gets a fresh token (after a 401). */
  refresh?(): Promise<string>;
}

const CONNECT_TIMEOUT_MS = 30_000;

export class McpConnection {
  private tools?: Promise<Tool[]>;
  private closed = false;

  private constructor(
    readonly server: McpServerSpec,
    private readonly client: Client,
    private readonly auth: McpAuth | undefined,
    private readonly release: () => void,
  ) {
    // Cached until the server says otherwise: the next listing asks again.
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.tools = undefined;
    });
  }

  /** Connects (refreshing an OAuth token once on a 401), or throws an McpServerError. */
  static async open(server: McpServerSpec, auth: McpAuth | undefined, sandbox: StdioSandboxOptions): Promise<McpConnection> {
    try {
      return await McpConnection.attempt(server, auth, auth?.token, sandbox);
    } catch (err) {
      if (!(isAuthFailure(err) && auth?.refresh)) throw classify(server, err, auth);
      let fresh: string;
      try {
        fresh = await auth.refresh();
      } catch (refreshErr) {
        throw new McpServerError('mcp_authentication_failed_error', server.name, `the server refused the token and refreshing it failed: ${(refreshErr as Error).message}`);
      }
      try {
        return await McpConnection.attempt(server, { ...auth, token: fresh }, fresh, sandbox);
      } catch (again) {
        throw classify(server, again, auth);
      }
    }
  }

  private static async attempt(server: McpServerSpec, auth: McpAuth | undefined, token: string | undefined, sandbox: StdioSandboxOptions): Promise<McpConnection> {
    const client = new Client({ name: 'corral', version: CORRAL_VERSION }, { capabilities: {} });
    const { transport, release, stderrTail } = await transportFor(server, token, sandbox);
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      await client.close().catch(() => {});
      release();
      // What a stdio server said before it failed is what tells the user why.
      const said = stderrTail().trim();
      if (said && err instanceof Error && !isAuthFailure(err)) throw new Error(`${err.message}; the server wrote: ${said.slice(-500)}`);
      throw err;
    }
    return new McpConnection(server, client, auth && token ? { ...auth, token } : auth, release);
  }

  /** The server's tools (every page), read once and kept until it says they changed. */
  listTools(): Promise<Tool[]> {
    this.tools ??= (async () => {
      const all: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.client.listTools(cursor ? { cursor } : undefined);
        all.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && all.length < 10_000);
      return all;
    })();
    const got = this.tools;
    got.catch(() => {
      if (this.tools === got) this.tools = undefined;
    });
    return got;
  }

  /** Calls a tool; one ledger event per call when a credential carries it. */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal) {
    if (this.auth && this.server.type === 'url') this.auth.recordUse(this.server.url);
    return this.client.callTool({ name, arguments: args }, undefined, { signal, timeout: 10 * 60_000, resetTimeoutOnProgress: true });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close().catch(() => {});
    this.release();
  }
}

async function transportFor(
  server: McpServerSpec,
  token: string | undefined,
  sandbox: StdioSandboxOptions,
): Promise<{ transport: Transport; release(): void; stderrTail(): string }> {
  if (server.type === 'url') {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    return { transport: new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }), release: () => {}, stderrTail: () => '' };
  }
  const launch = await launchStdio(server.command, sandbox);
  // A clean environment: the SDK's short list (PATH, USER, …) and the server's own, never the
  // host's (which may hold keys). HOME is the server's private folder: the user's home holds
  // secret stores, and its shell start-up files are not the server's business.
  const env = { ...getDefaultEnvironment(), HOME: launch.cwd, ...(server.env ?? {}) };
  const transport = new StdioClientTransport({ command: launch.command, args: launch.args, cwd: launch.cwd, env, stderr: 'pipe' });
  // Always read (a full pipe would stall the server); only the last 2 KB are kept.
  let tail = '';
  transport.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-2048);
  });
  return { transport, release: launch.release, stderrTail: () => tail };
}

/** A 401/403 from a URL server (the token is missing, wrong or expired). */
export function isAuthFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403)) return true;
  const msg = err instanceof Error ? err.message : String(err);
  return /\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(msg);
}

/** The API's error for a failed connection; the message never holds the token. */
function classify(server: McpServerSpec, err: unknown, auth: McpAuth | undefined): McpServerError {
  if (err instanceof McpServerError) return err;
  let msg = err instanceof Error ? err.message : String(err);
  if (auth?.token) msg = msg.split(auth.token).join('[token]');
  if (isAuthFailure(err))
    return new McpServerError('mcp_authentication_failed_error', server.name, `MCP server '${server.name}' refused the credential${auth ? '' : ' (the session\'s vaults hold none for its URL)'}: ${msg.slice(0, 500)}`);
  return new McpServerError('mcp_connection_failed_error', server.name, `could not connect to MCP server '${server.name}': ${msg.slice(0, 500)}`);
}
