import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brainEnv } from '../child-env';
import type { HandRegistry } from '../hands/registry';
import type { SessionLog } from '../session/store';
import { Topic } from '../session/subscriptions';
import type { EventInput, EventSlice } from '../session/types';
import { analyse, hasWork } from './analyse';
import type { LiveDelta } from './live-text';
import type { BrainToHost, HostToBrain } from './ipc-protocol';

/** A running brain process, whatever started it (child_process.fork, Electron's utilityProcess). */
export interface BrainChild {
  send(message: HostToBrain): void;
  onMessage(listener: (message: BrainToHost) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(): void;
  readonly pid: number | undefined;
}


/** Options of the supervisor. */
export interface SupervisorOptions {
  log: SessionLog;
  hands: HandRegistry;
  /** Starts a brain for a session; default: `child_process.fork` of the brain entry. */
  spawn?: (sessionId: string) => BrainChild;
  /** Restarts allowed per session per minute before it is stopped with an error. */
  maxRestartsPerMinute?: number;
}

/** Event types a brain may append; user events come only from users. */
const BRAIN_EVENT = /^(agent\.|span\.|session\.status_(running|idle|rescheduled)$|session\.error$)/;

interface Running {
  child: BrainChild;
  calls: Map<number, AbortController>;
}

/**
 * Keeps one brain process per session that has work: wakes brains for new input, at start for
 * sessions that were running, and again when a brain dies. Serves the brains' requests against
 * the log and the hands; a brain can append only brain events.
 */
export class BrainSupervisor {
  private readonly running = new Map<string, Running>();
  private readonly restarts = new Map<string, number[]>();
  private readonly deltas = new Topic<string, LiveDelta>();
  /** Text being written now, per session and event id: replayed to late subscribers. */
  private readonly writing = new Map<string, Map<string, { start: LiveDelta; text: string }>>();
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(private readonly opts: SupervisorOptions) {}

  /** Wakes every session that was running (after a crash or a quit) and follows new input. */
  start(): void {
    this.unsubscribe = this.opts.log.subscribeAll(({ sessionId, event }) => {
      // Text being written ends as its event is logged, or with its request.
      const writing = this.writing.get(sessionId);
      if (writing) {
        writing.delete(event.id);
        if (writing.size === 0 || event.type === 'span.model_request_end') this.writing.delete(sessionId);
      }
      if (!event.type.startsWith('user.') && event.type !== 'system.message') return;
      const brain = this.running.get(sessionId);
      if (brain) brain.child.send({ t: event.type === 'user.interrupt' ? 'interrupt' : 'wake' });
      else this.wake(sessionId);
    });
    for (const id of this.sessionsToResume()) this.wake(id);
  }

  /** Starts a fresh brain for the session if it has work and none is running. */
  wake(sessionId: string): boolean {
    if (this.stopped || this.running.has(sessionId)) return false;
    const session = this.opts.log.findSession(sessionId);
    if (!session || session.archived_at) return false;
    if (!hasWork(analyse(allEvents(this.opts.log, sessionId)))) return false;
    const child = (this.opts.spawn ?? defaultSpawn)(sessionId);
    const brain: Running = { child, calls: new Map() };
    this.running.set(sessionId, brain);
    child.onMessage((m) => this.onBrainMessage(sessionId, brain, m));
    child.onExit((code, signal) => this.onBrainExit(sessionId, brain, code, signal));
    return true;
  }

  /** Sessions with a brain now. */
  active(): string[] {
    return [...this.running.keys()];
  }

  /** The pid of a session's brain (tests kill it). */
  pidOf(sessionId: string): number | undefined {
    return this.running.get(sessionId)?.child.pid;
  }

  /**
   * Live text of events being written (event_start / event_delta), never logged. A subscriber
   * that arrives mid-reply first gets what was written so far.
   */
  subscribeDeltas(sessionId: string, listener: (d: LiveDelta) => void): () => void {
    for (const [id, w] of this.writing.get(sessionId) ?? []) {
      listener(w.start);
      if (w.text) listener({ type: 'event_delta', event_id: id, delta: { type: 'content_delta', content: { type: 'text', text: w.text }, index: 0 } });
    }
    return this.deltas.subscribe(sessionId, listener);
  }

  private remember(sessionId: string, d: LiveDelta): void {
    let writing = this.writing.get(sessionId);
    if (d.type === 'event_start') {
      if (!writing) this.writing.set(sessionId, (writing = new Map()));
      writing.set(d.event.id, { start: d, text: '' });
    } else {
      const w = writing?.get(d.event_id);
      if (w) w.text += d.delta.content.text;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const brain of this.running.values()) {
      for (const c of brain.calls.values()) c.abort();
      brain.child.kill();
    }
    this.running.clear();
  }

  private sessionsToResume(): string[] {
    // Running when the host stopped, or input that no brain had picked up yet.
    const rows = this.opts.log.db
      .prepare(
        `SELECT s.id FROM sessions s WHERE s.deleted_at IS NULL AND s.archived_at IS NULL AND (
           s.status IN ('running', 'rescheduling') OR
           (SELECT e.type FROM events e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)
             IN ('user.message', 'user.tool_result', 'user.custom_tool_result', 'system.message'))`,
      )
      .all() as { id: string }[];
    return rows.map((r) => r.id);
  }

  private onBrainMessage(sessionId: string, brain: Running, m: BrainToHost): void {
    if (m.t === 'delta') {
      this.remember(sessionId, m.delta);
      return this.deltas.publish(sessionId, m.delta);
    }
    if (m.t === 'cancel') return brain.calls.get(m.id)?.abort();
    if (m.t !== 'req') return;
    const reply = (ok: boolean, valueOrError: unknown) => {
      if (this.running.get(sessionId) !== brain) return;
      try {
        brain.child.send(ok ? { t: 'res', id: m.id, ok: true, value: valueOrError } : { t: 'res', id: m.id, ok: false, error: String(valueOrError) });
      } catch {
        // The brain is gone; its exit handler cleans up.
      }
    };
    this.handle(sessionId, brain, m).then(
      (v) => reply(true, v),
      (err) => reply(false, err instanceof Error ? err.message : err),
    );
  }

  private async handle(sessionId: string, brain: Running, m: Extract<BrainToHost, { t: 'req' }>): Promise<unknown> {
    const { log } = this.opts;
    const args = (m.args ?? {}) as Record<string, unknown>;
    switch (m.op) {
      case 'readEvents':
        return log.getEvents(sessionId, (args.slice ?? {}) as EventSlice);
      case 'emit': {
        const events = args.events as EventInput[];
        if (!Array.isArray(events) || events.some((e) => typeof e?.type !== 'string' || !BRAIN_EVENT.test(e.type))) {
          throw new Error('a brain may append only agent.*, span.*, session.status_* and session.error events');
        }
        return log.emitEvents(sessionId, events, `brain:${String(args.key)}`);
      }
      case 'execute': {
        const ctrl = new AbortController();
        brain.calls.set(m.id, ctrl);
        try {
          return await this.opts.hands.execute(sessionId, typeof args.hand === 'string' ? args.hand : undefined, String(args.name), (args.input ?? {}) as Record<string, unknown>, {
            signal: ctrl.signal,
            toolUseId: typeof args.toolUseId === 'string' ? args.toolUseId : undefined,
          });
        } finally {
          brain.calls.delete(m.id);
        }
      }
      case 'agent':
        return log.getSession(sessionId).record.agent;
      case 'hands':
        return this.opts.hands.list(sessionId);
      default:
        throw new Error(`unknown request ${String(m.op)}`);
    }
  }

  private onBrainExit(sessionId: string, brain: Running, code: number | null, signal: string | null): void {
    if (this.running.get(sessionId) !== brain) return;
    this.running.delete(sessionId);
    this.writing.delete(sessionId);
    // Whatever the dead brain started on a hand is stopped: its outcome is reported as unknown.
    for (const c of brain.calls.values()) c.abort();
    if (this.stopped) return;
    const log = this.opts.log;
    if (!log.findSession(sessionId)) return;
    if (!hasWork(analyse(allEvents(log, sessionId)))) return;
    const now = Date.now();
    const recent = (this.restarts.get(sessionId) ?? []).filter((t) => now - t < 60_000);
    recent.push(now);
    this.restarts.set(sessionId, recent);
    if (recent.length > (this.opts.maxRestartsPerMinute ?? 20)) {
      const why = `the brain stopped ${recent.length} times in a minute (last: ${signal ?? `exit code ${code}`}); the session is stopped until new input arrives`;
      const last = log.emitEvent(sessionId, { type: 'session.error', error: { type: 'unknown_error', message: why, retry_status: { type: 'terminal' } } });
      log.emitEvent(sessionId, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, handled_through: last.seq });
      this.restarts.delete(sessionId);
      return;
    }
    this.wake(sessionId);
  }
}

function allEvents(log: SessionLog, sessionId: string) {
  const out = log.getEvents(sessionId, { limit: 100_000 });
  while (out.length > 0 && out.length % 100_000 === 0) {
    const page = log.getEvents(sessionId, { after: out[out.length - 1]!.seq, limit: 100_000 });
    if (page.length === 0) break;
    out.push(...page);
  }
  return out;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const BRAIN_NICENESS = 5;

/** `child_process.fork` of the brain entry: the TypeScript source under tsx, or the build. */
function defaultSpawn(sessionId: string): BrainChild {
  const fromSource = import.meta.url.endsWith('.ts');
  return forkBrain(fromSource ? path.join(here, 'entry.ts') : path.join(here, 'brain-entry.js'), sessionId, fromSource ? ['--import', 'tsx'] : []);
}

/** Forks a brain entry file for a session (also used to run the built entry from source). */
export function forkBrain(entry: string, sessionId: string, execArgv: string[] = []): BrainChild {
  // An allowlist (child-env.ts): the host's other variables, its API key among them, stay out.
  const env: NodeJS.ProcessEnv = brainEnv();
  // Inside Electron, fork runs the Electron binary: make it behave as Node.
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
  const child = fork(entry, [sessionId], {
    execArgv,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  // Brains run a little below the host: with many sessions busy at once, the host (which every
  // brain waits on for each append and tool call) keeps its turn on the CPU.
  if (child.pid) {
    try {
      os.setPriority(child.pid, BRAIN_NICENESS);
    } catch {
      // Not permitted on this system: equal priority then.
    }
  }
  // Without a listener, an 'error' (a brain that could not start) would be thrown in the host.
  child.on('error', (err) => console.error(`corral: brain of ${sessionId}: ${err.message}`));
  return {
    send: (m) => {
      // A brain that has just died may still look connected: the write then fails (EPIPE),
      // which the callback takes instead of an 'error' thrown in the host. Its exit is
      // handled by onExit.
      if (child.connected) child.send(m, () => {});
    },
    onMessage: (l) => child.on('message', (m) => l(m as BrainToHost)),
    onExit: (l) => {
      let told = false;
      const once = (code: number | null, sig: NodeJS.Signals | null) => {
        if (!told) l(code, sig);
        told = true;
      };
      child.on('exit', once);
      // A brain that never started gets 'error' then 'close', and no 'exit'.
      child.on('close', once);
    },
    kill: () => child.kill('SIGKILL'),
    get pid() {
      return child.pid;
    },
  };
}
