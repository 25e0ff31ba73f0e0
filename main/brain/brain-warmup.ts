import { Harness, type BrainIO } from './harness';
import type { ModelCaller } from './model';
import { createHostChannel } from './host-channel';
import { splitDelta } from './live-text';
import { SessionView } from './session-view';
import { builtinToolDefinitions } from './tool-definitions';
import type { LoggedEvent } from '../session/types';

/**
 * Runs one made-up turn through a harness, in memory (no host, no model, no I/O), so a pooled
 * brain has compiled the code of a first turn before it is bound. V8 compiles each function the
 * first time it runs: without this, a bound brain's first turn spent 10–20 ms compiling the
 * view, the analysis, the context builder and the harness's steps (bench/first-turn-trace.ts).
 * Nothing here is sent anywhere; the channel's writes are dropped.
 */
export async function warmUpFirstTurn(): Promise<void> {
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
  const model: ModelCaller = {
    stream: async (params, handlers) => {
      JSON.stringify(params);
      handlers.onBlockStart?.(0, 'text');
      handlers.onTextDelta?.(0, 'ready');
      await handlers.onBlock({ type: 'text', text: 'ready' }, 0);
      return { stopReason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
    },
  };
  const view = new SessionView(async () => ({ events: [], more: false }));
  view.prime({ events: [logged({ type: 'user.message', content: [{ type: 'text', text: 'warm up' }] })], more: false });
  await new Harness(io, model, { maxRetries: 0, retryBaseMs: 0, retryMaxMs: 0 }, view).run();
  await channel.sent();
}
