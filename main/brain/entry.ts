/**
 * A brain process: one session's harness, in a process of its own (started by the host's brain
 * launcher, or forked by the host). All it knows comes from the log (read once, then passed on by
 * the host as it grows), all it does goes through the host
 * (`emit`, `execute`); when it dies, the host starts another that continues from the log.
 * Started with a session id (`fork(entry, [sessionId])`, its model capability in its env), it
 * begins at once; started without one (a pooled brain, brain-pool.ts), it loads its code and
 * waits for the host's `bind`, which names the session and carries the capability.
 */
import { WAKING_TYPES } from './analyse';
import { builtinToolDefinitions } from './tool-definitions';
import { Harness, type BrainIO } from './harness';
import { createHostChannel } from './host-channel';
import { POOLED_READY, type BrainPrime, type BrainToHost, type HostToBrain } from './ipc-protocol';
import { openBrainWire } from './brain-wire';
import { warmUpFirstTurn } from './brain-warmup';
import { createAnthropicCaller } from './model';
import { SessionView } from './session-view';
import { splitDelta } from './live-text';

const argSession = process.argv[2];
const maybeWire = openBrainWire();
if (!maybeWire) {
  console.error('corral brain: start me with fork(entry, [sessionId?]) and an IPC channel');
  process.exit(2);
}
const wire = maybeWire;

// The host is gone: nothing this process holds matters, and a new host will wake a new brain.
wire.onClose(() => process.exit(0));

const num = (v: string | undefined, fallback: number) => (v && Number.isFinite(Number(v)) ? Number(v) : fallback);

if (argSession) run(argSession);
else {
  // Pooled: everything is loaded; the session (and its capability) comes with the first message.
  const onBind = (message: unknown) => {
    const m = message as HostToBrain;
    if (m.t !== 'bind') return;
    wire.off(onBind);
    Object.assign(process.env, m.env);
    run(m.sessionId, m.prime);
  };
  wire.on(onBind);
  // A first turn run in memory compiles its code now rather than on the session's time; then the
  // pool hears this brain is ready (the warm-up does no I/O: a bind waits for it, at most).
  // `fork(entry, ['', '--no-warm-up'])`: no warm-up; `'--warm-up-in-memory'`: its model in memory
  // (bench/first-turn-trace.ts, the pool as it was).
  const warm = process.argv[3] === '--no-warm-up' ? Promise.resolve() : warmUpFirstTurn({ inMemoryModel: process.argv[3] === '--warm-up-in-memory' });
  // A pool stopped meanwhile (its host closing) has closed the channel: the callback takes the
  // failed write, which would otherwise be an unhandled 'error' and a stack trace on stderr.
  void warm.catch(() => {}).then(() => wire.connected && wire.send(POOLED_READY));
}

function run(sessionId: string, prime?: BrainPrime): void {
  // A failed write means the host is gone; 'disconnect' above ends this process.
  const host = createHostChannel((m: BrainToHost, done) => wire.send(m, done));
  const view = new SessionView((slice) => host.request('readPage', { slice }));
  // What came with the bind is used once, for the first run; later runs ask as usual.
  if (prime) view.prime(prime.page);
  let primed = prime && { agent: prime.agent, hands: prime.hands };
  const once = <T>(key: 'agent' | 'hands', ask: () => Promise<T>) => () => {
    const had = primed?.[key];
    if (primed) delete primed[key];
    if (primed && !('agent' in primed) && !('hands' in primed)) primed = undefined;
    return had !== undefined ? Promise.resolve(had as T) : ask();
  };

  const io: BrainIO = {
    readEvents: (slice) => host.request('readEvents', { slice }),
    emit: (events, key) => host.request('emit', { events, key }),
    execute: (call, signal) => host.request('execute', call, signal),
    agent: once('agent', () => host.request('agent', {})),
    hands: once('hands', () => host.request('hands', {})),
    mcpTools: () => host.request('mcpTools', {}),
    mcpCall: (call, signal) => host.request('mcpCall', call, signal),
    delta: (delta) => {
      for (const piece of splitDelta(delta)) host.notify({ t: 'delta', delta: piece });
    },
    hold: () => host.hold(),
    toolDefinitions: builtinToolDefinitions,
  };

  const model = createAnthropicCaller();
  // The session's first request is built next: its connection to the model proxy opens meanwhile.
  model.preconnect?.();
  const harness = new Harness(
    io,
    model,
    {
      maxRetries: num(process.env.CORRAL_MODEL_RETRIES, 4),
      retryBaseMs: num(process.env.CORRAL_RETRY_BASE_MS, 2000),
      retryMaxMs: num(process.env.CORRAL_RETRY_MAX_MS, 60_000),
    },
    view,
  );

  const onMessage = (message: unknown): void => {
    const m = message as HostToBrain;
    if (m.t === 'batch') return m.messages.forEach(onMessage);
    if (m.t === 'res') return host.settle(m);
    if (m.t !== 'events') return;
    // What the host read as it sent these events holds for the run they start; any later events
    // may have changed it (a hand attached, the agent updated): then the run asks.
    primed = m.turn && { agent: m.turn.agent, hands: m.turn.hands };
    view.accept(m.events);
    for (const e of m.events) {
      if (e.type === 'user.interrupt') {
        harness.interrupt();
        wake(); // an idle session's calls waiting for the user are answered "not run"
      } else if (WAKING_TYPES.has(e.type)) wake();
    }
  };
  wire.on(onMessage);

  // After a turn the process lingers a while with its view of the log, so the next message skips
  // the start-up and the reading.
  const lingerMs = num(process.env.CORRAL_BRAIN_LINGER_MS, 30_000);
  let running = false;
  let again = false;
  let lingerTimer: NodeJS.Timeout | undefined;

  function wake(): void {
    if (running) {
      again = true;
      return;
    }
    clearTimeout(lingerTimer);
    running = true;
    again = false;
    harness.run().then(
      () => {
        running = false;
        if (again) return wake();
        // Nothing to do, having seen the log up to here: if this process leaves, the host needs
        // a new brain only for input after this point.
        host.notify({ t: 'idle', through: view.lastSeq });
        lingerTimer = setTimeout(() => void host.sent().then(() => running || process.exit(0)), lingerMs);
      },
      (err) => {
        console.error(`corral brain ${sessionId}: ${err instanceof Error ? err.stack : String(err)}`);
        process.exit(1);
      },
    );
  }
  wake();
}
