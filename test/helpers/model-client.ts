/**
 * Shared setup of the model-server fixture's tests (test/fixtures/model-server-*.test.ts): a server
 * per test driven by the real @anthropic-ai/sdk.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach } from 'vitest';
import { startModelServer, type ModelServer, type Reply } from '../fixtures/model-server';

export const MODEL = 'claude-test-1';
export const servers: ModelServer[] = [];

/** Starts a model server on `script` (closed after the test) and an SDK client pointed at it. */
export async function setup(script: Reply[] | Parameters<typeof startModelServer>[0] = [], maxRetries = 0) {
  const server = await startModelServer(script);
  servers.push(server);
  const client = new Anthropic({ apiKey: 'x', baseURL: server.url, maxRetries });
  return { server, client };
}

export const hello = { model: MODEL, max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hello' }] };

/** Registers the hook that closes the servers each test started. */
export function useModelServers(): void {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
}
