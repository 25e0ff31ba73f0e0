import Anthropic from '@anthropic-ai/sdk';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { createHost, type Host } from '../../main/host';
import type { Logger } from '../../main/logging/logger';
import { tmpDir } from './tmp';

/** A host with its HTTP server on a free loopback port, and an SDK client pointed at it. */
export interface TestServer {
  host: Host;
  server: RunningServer;
  apiKey: string;
  client: Anthropic;
  /** A JSON request with the key: its status and parsed body. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

export async function startTestServer(opts: { heartbeatMs?: number; rendererDir?: string; logger?: Logger; stallMs?: number; allowedWorkRoots?: string[] } = {}): Promise<TestServer> {
  const dataDir = tmpDir();
  const host = createHost({ dataDir, logger: opts.logger, workRoot: tmpDir('corral-work-'), allowedWorkRoots: opts.allowedWorkRoots });
  // As `serve` does, tests start once the host has (the vault open, the local sandbox checked).
  await host.started;
  const apiKey = 'test-key-123';
  const server = await startServer(host, {
    port: 0,
    apiKey,
    rendererDir: opts.rendererDir ?? tmpDir(),
    heartbeatMs: opts.heartbeatMs,
    stallMs: opts.stallMs,
  });
  const client = new Anthropic({ apiKey, baseURL: server.url, maxRetries: 0 });
  return {
    host,
    server,
    apiKey,
    client,
    call: async (method, path, body) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    },
    close: async () => {
      await server.close();
      await host.close();
    },
  };
}
