import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { warmUpFirstTurn } from '../../main/brain/brain-warmup';
import { createAnthropicCaller } from '../../main/brain/model';
import { startWarmUpServer } from '../../main/brain/warm-up-server';

// A pooled brain warms up with a first turn whose model is its own client talking to a server in
// its own process (brain-warmup.ts, warm-up-server.ts), so a bound brain's first request runs
// compiled code.

const params = { model: 'warm-up', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } as never;

describe('the warm-up', () => {
  it('streams a whole reply to the brain’s own client, request after request on its one connection, and takes no other', async () => {
    const server = await startWarmUpServer();
    const caller = createAnthropicCaller({ apiKey: 'warm-up', baseURL: server.url });
    for (let i = 0; i < 2; i++) {
      const blocks: unknown[] = [];
      const got = await caller.stream(params, { onBlock: async (b) => void blocks.push(b) }, new AbortController().signal);
      expect(got.stopReason).toBe('end_turn');
      expect(blocks).toEqual([{ type: 'text', text: 'ready' }]);
    }
    // A second connection finds nobody listening.
    const port = Number(new URL(server.url).port);
    const refused = await new Promise<string>((resolve) => net.connect(port, '127.0.0.1').on('connect', () => resolve('connected')).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message)));
    expect(refused).toBe('ECONNREFUSED');
    server.close();
  });

  it('runs a first turn and leaves nothing open behind it', async () => {
    const open = () => (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().filter((h) => h instanceof net.Socket || h instanceof net.Server).length;
    await new Promise((r) => setTimeout(r, 50)); // the test before's connections closing
    const before = open();
    await warmUpFirstTurn();
    await new Promise((r) => setTimeout(r, 20));
    expect(open()).toBe(before);
    await warmUpFirstTurn({ inMemoryModel: true });
    expect(open()).toBe(before);
  });
});
