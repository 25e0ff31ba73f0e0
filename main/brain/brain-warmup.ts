import { Harness, type BrainIO } from './harness';
import { createAnthropicCaller, type ModelCaller } from './model';
import { createHostChannel } from './host-channel';
import { splitDelta } from './live-text';
import { SessionView } from './session-view';
import { builtinToolDefinitions } from './tool-definitions';
import { startWarmUpServer } from './warm-up-server';
import type { LoggedEvent } from '../session/types';

/**
 * Runs one made-up turn through a harness, so a pooled brain has compiled the code of a first
 * turn before it is bound. V8 compiles each function the first time it runs: without this, a
 * bound brain's first turn spent 10–20 ms compiling the view, the analysis, the context builder
 * and the harness's steps (bench/first-turn-trace.ts). The model is the brain's own client
 * talking to a server in this process on loopback (warm-up-server.ts): with a model in memory
 * instead, the client's first request (its socket, the body's buffer, the answer's framing and
 * parsing) still cost a bound brain about 3 ms more before its request left. Nothing here
 * reaches the host: the channel's writes are dropped. Where loopback cannot be listened on (or
 * `inMemoryModel` asks), the model is in memory.
 */
export async function warmUpFirstTurn(opts: { inMemoryModel?: boolean } = {}): Promise<void> {
  let seq = 0;
  const at = new Date().toISOString();
  const logged = (e: Record<string, unknown>): LoggedEvent => ({ id: `sevt_warm${seq}`, processed_at: at, ...e, seq: ++seq, type: String(e.type) });
  const channel = createHostChannel((_m, done) => done());
  const io: BrainIO = {
    readEvents: async () => [],
    emit: async (events) => {
      // The wire's serialisation, as a real append's request would be written.
      channel.notify({ t: 'idle', through: JSON.stringify(events).length > 0 ? seq : 0 });
      return events.map((e) => logged(e as Record<string, unknown>));
    },
    execute: async () => {
      throw new Error('no hand while warming up');
    },
    hands: async () => [],
    agent: async () => ({ type: 'agent', id: 'agent_warm', version: 1, name: 'warm', model: { id: 'warm' }, system: 'warm', tools: [{ type: 'agent_toolset_20260401', configs: [], default_config: { enabled: true } }] }),
    delta: (d) => void splitDelta(d),
    hold: () => channel.hold(),
    toolDefinitions: builtinToolDefinitions,
  };
  const server = opts.inMemoryModel ? undefined : await startWarmUpServer().catch(() => undefined);
  // The key is never sent anywhere but to the server above.
  const model: ModelCaller = server ? createAnthropicCaller({ apiKey: 'warm-up', baseURL: server.url, timeoutMs: WARM_UP_TIMEOUT_MS }) : IN_MEMORY_MODEL;
  const view = new SessionView(async () => ({ events: [], more: false }));
  view.prime({ events: [logged({ type: 'user.message', content: [{ type: 'text', text: 'warm up' }] })], more: false });
  try {
    await new Harness(io, model, { maxRetries: 0, retryBaseMs: 0, retryMaxMs: 0 }, view).run();
  } finally {
    server?.close();
  }
  await channel.sent();
}

/** A warm-up whose server does not answer in this long gives up (the brain is then ready, colder). */
const WARM_UP_TIMEOUT_MS = 2000;

/** The model without a socket: one text block. */
const IN_MEMORY_MODEL: ModelCaller = {
  stream: async (params, handlers) => {
    JSON.stringify(params);
    handlers.onBlockStart?.(0, 'text');
    handlers.onTextDelta?.(0, 'ready');
    await handlers.onBlock({ type: 'text', text: 'ready' }, 0);
    return { stopReason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
  },
};
