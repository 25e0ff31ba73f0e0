import type { HandRegistry } from '../hands/registry';
import type { Logger } from '../logging/logger';
import type { SessionLog } from '../session/store';
import type { EventInput, EventSlice, LoggedEvent } from '../session/types';
import { WAKING_TYPES } from './analyse';
import type { LiveDelta } from './live-text';
import { LiveTextRelay } from './live-text-relay';
import type { BrainRequest, BrainToHost, HostToBrain } from './ipc-protocol';
import { parseBatchedMessage, parseBrainMessage, type ParsedBrainMessage } from './ipc-schema';
import { mcpToolResultEvent, resultKey, toolResultEvent } from './tool-result-event';
import type { BrainMcp } from '../mcp/brain-mcp';
import { BrainPool, brainPoolSize } from './brain-pool';
import { brainPrime, turnPrime } from './brain-prime';
import { defaultEntry, defaultSpawn } from './brain-fork';
import { BrainOutbox, errorText } from './brain-outbox';
import type { BrainChild, RunningBrain } from './running-brain';

export { forkBrain } from './brain-fork';

export type { BrainChild } from './running-brain';

/** Options of the supervisor. */
export interface SupervisorOptions {
  log: SessionLog;
  hands: HandRegistry;
  /**
   * Starts a brain for a session; default: one of a pool of brains forked ahead from the brain
   * entry (`CORRAL_BRAIN_POOL` of them, brain-pool.ts), bound to the session when it needs one.
   */
  spawn?: (sessionId: string) => BrainChild;
  /** Restarts allowed per session per minute before it is stopped with an error. */
  maxRestartsPerMinute?: number;
  /** Redacts live text before anyone sees it (the vault's values); null: nothing to show yet. */
  redactDelta?: (sessionId: string, delta: LiveDelta) => LiveDelta | null;
  /** Where brain starts, exits and crashes are logged. */
  logger?: Logger;
  /**
   * For measurement only (bench:ttft's coupled mode): awaited once per session before its first
   * brain starts, as a harness living inside its container would first provision it in full.
   */
  beforeFirstBrain?: (sessionId: string) => Promise<unknown>;
  /** The host's MCP client (absent: sessions' MCP servers give no tools). */
  mcp?: BrainMcp;
}

const REPORTED_REJECTIONS = 3;
/** Tool call ids kept per brain for execute's check (a brain whose calls are never run cannot grow it past this). */
const MAX_LOGGED_CALLS = 1000;
/** Bytes of events one read by a brain returns at most (its view reads on from where a page ends). */
const BRAIN_READ_BYTES = 8 * 1024 * 1024;
const boundedSlice = (slice: EventSlice): EventSlice => ({ ...slice, maxBytes: Math.min(slice.maxBytes ?? BRAIN_READ_BYTES, BRAIN_READ_BYTES) });

/**
 * Keeps one brain process per session that has work, and serves their requests against the log
 * and the hands. It never reads a session's log to decide anything: input events start a brain
 * (the brain works out from the log what is pending), every event appended while a brain runs
 * is passed on to it, a brain that exits cleanly having seen every input is not replaced, and
 * one that crashes is (until it crashes too often). Every message a brain sends is checked
 * (ipc-schema.ts) before anything is done with it; a brain can append only brain events.
 */
export class BrainSupervisor {
  private readonly running = new Map<string, RunningBrain>();
  private readonly restarts = new Map<string, number[]>();
  private readonly liveText = new LiveTextRelay();
  private unsubscribe?: () => void;
  private stopped = false;
  private pool?: BrainPool;
  /** Sessions beforeFirstBrain was started for, and whether it is still running. */
  private readonly prepared = new Map<string, boolean>();

  constructor(private readonly opts: SupervisorOptions) {}

  /** Wakes every session that was running (after a crash or a quit) and follows new input. */
  start(): void {
    // Brains started ahead, once the host can give them a capability (it calls start() then).
    if (!this.opts.spawn && !this.stopped) {
      this.pool = new BrainPool({ ...defaultEntry(), size: brainPoolSize(), logger: this.opts.logger });
      this.pool.fill();
    }
    this.unsubscribe = this.opts.log.subscribeAll(({ sessionId, event }) => this.onAppended(sessionId, event));
    for (const id of this.opts.log.sessionsToResume()) this.wake(id);
  }

  /**
   * Starts a fresh brain for the session unless one is running (or the session is archived or
   * gone). The brain decides from the log what, if anything, is pending.
   */
  wake(sessionId: string): boolean {
    if (this.stopped || this.running.has(sessionId)) return false;
    const session = this.opts.log.findSession(sessionId);
    if (!session || session.archived_at) return false;
    const before = this.opts.beforeFirstBrain;
    if (before && this.prepared.get(sessionId) !== false) {
      if (this.prepared.has(sessionId)) return false;
      this.prepared.set(sessionId, true);
      void before(sessionId)
        .catch(() => {})
        .finally(() => (this.prepared.set(sessionId, false), this.wake(sessionId)));
      return true;
    }
    const child = this.opts.spawn ? this.opts.spawn(sessionId) : this.pool ? this.pool.spawn(sessionId, () => brainPrime(this.opts.log, this.opts.hands, sessionId)) : defaultSpawn(sessionId);
    // A brain that is gone no longer gets anything (its exit handler cleans up).
    const out = new BrainOutbox((m) => this.running.get(sessionId) === brain && child.send(m));
    const brain: RunningBrain = { child, calls: new Map(), lastInput: 0, rejected: 0, out, loggedCalls: new Set() };
    this.running.set(sessionId, brain);
    this.opts.logger?.info({ session_id: sessionId, pid: child.pid }, 'brain started');
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
    return this.liveText.subscribe(sessionId, listener);
  }

  /** Publishes live text (the vault also pushes here what it held back while redacting). */
  pushDelta(sessionId: string, d: LiveDelta): void {
    this.liveText.publish(sessionId, d);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.pool?.stop();
    for (const brain of this.running.values()) {
      for (const c of brain.calls.values()) c.abort();
      brain.child.kill();
    }
    this.running.clear();
  }

  /** Every committed event: passed on to the session's brain, or a reason to start one. */
  private onAppended(sessionId: string, event: LoggedEvent): void {
    this.liveText.logged(sessionId, event);
    const brain = this.running.get(sessionId);
    if (brain) {
      const waking = WAKING_TYPES.has(event.type);
      if (event.type === 'session.status_idle' && typeof event.handled_through === 'number') brain.turnEnded = event.handled_through;
      // Input for a brain whose turn is over comes with what its next run asks first.
      const done = Math.max(brain.idleThrough ?? -1, brain.turnEnded ?? -1);
      const turn = waking && !brain.held && done >= brain.lastInput ? turnPrime(this.opts.log, this.opts.hands, sessionId) : undefined;
      if (waking) brain.lastInput = Math.max(brain.lastInput, event.seq);
      if (brain.held) brain.held.push(event);
      else this.send(sessionId, brain, turn ? { t: 'events', events: [event], turn } : { t: 'events', events: [event] });
      return;
    }
    if (WAKING_TYPES.has(event.type)) this.wake(sessionId);
    else if (event.type === 'user.interrupt') {
      // A running session has something to interrupt (and it normally has a brain); an idle one
      // may hold calls waiting for the user's confirmation, which the interrupt answers.
      const status = this.opts.log.findSession(sessionId)?.status;
      if (status === 'running' || status === 'rescheduling' || (status === 'idle' && this.waitsForUser(sessionId))) this.wake(sessionId);
    }
  }

  /** Whether the session's last idle was for calls waiting for the user (one indexed read). */
  private waitsForUser(sessionId: string): boolean {
    const [idle] = this.opts.log.getEventPage(sessionId, { types: ['session.status_idle'], order: 'desc', limit: 1 }).events;
    return (idle?.stop_reason as { type?: string } | undefined)?.type === 'requires_action';
  }

  private send(sessionId: string, brain: RunningBrain, message: Exclude<HostToBrain, { t: 'batch' } | { t: 'bind' }>): void {
    if (this.running.get(sessionId) === brain) brain.out.send(message);
  }

  private onBrainMessage(sessionId: string, brain: RunningBrain, raw: unknown): void {
    try {
      const m = this.accepted(sessionId, brain, parseBrainMessage(raw));
      if (m) this.handle(sessionId, brain, m);
    } catch (err) {
      // Nothing a brain sends may throw in the host.
      console.error(`corral: a message from the brain of ${sessionId} failed: ${errorText(err)}`);
    }
  }

  /** A brain's message as checked; one refused is reported (and answered, if it was a request). */
  private accepted(sessionId: string, brain: RunningBrain, parsed: ParsedBrainMessage): BrainToHost | undefined {
    if (parsed.ok) return parsed.message;
    if (brain.rejected++ < REPORTED_REJECTIONS) console.error(`corral: refused a message from the brain of ${sessionId}: ${parsed.error}`);
    if (parsed.replyTo !== undefined) this.send(sessionId, brain, { t: 'res', id: parsed.replyTo, ok: false, error: parsed.error });
    return undefined;
  }

  private handle(sessionId: string, brain: RunningBrain, m: BrainToHost): void {
    switch (m.t) {
      case 'delta': {
        // Vault: live text is redacted like the events it becomes (those via the log's view).
        const delta = this.opts.redactDelta ? this.opts.redactDelta(sessionId, m.delta) : m.delta;
        if (delta) this.liveText.publish(sessionId, delta);
        return;
      }
      case 'cancel':
        return brain.calls.get(m.id)?.abort();
      case 'idle':
        brain.idleThrough = m.through;
        return;
      case 'req':
        return this.serve(sessionId, brain, m);
      case 'batch':
        return this.onBatch(sessionId, brain, m.messages);
    }
  }

  /**
   * A brain's messages sent in one go, in order. Appends that follow each other (a reply's calls
   * and its end) are committed together, each answered (and failing) on its own. The answers
   * leave in one message, which waits for the call the batch started (the brain waits for it
   * anyway) unless the reply had a denied call (the brain logs its result once the end is answered).
   */
  private onBatch(sessionId: string, brain: RunningBrain, messages: readonly unknown[]): void {
    let run: BrainRequest<'emit'>[] = [];
    const calls: number[] = [];
    let denied = false; // a call of the reply was denied
    const appendRun = () => {
      if (run.length) this.append(sessionId, brain, run.map((r) => ({ id: r.id, events: r.args.events, key: r.args.key })));
      run = [];
    };
    const handleAll = () => {
      for (const raw of messages) {
        const parsed = parseBatchedMessage(raw);
        if (parsed.ok && parsed.message.t === 'req' && parsed.message.op === 'emit') {
          denied ||= parsed.message.args.events.some((e) => e.type === 'agent.tool_use' && e.evaluated_permission === 'deny');
          run.push(parsed.message);
          continue;
        }
        appendRun(); // answered in order: the appends before it first
        const m = this.accepted(sessionId, brain, parsed);
        if (m?.t === 'req' && (m.op === 'execute' || m.op === 'mcpCall')) calls.push(m.id);
        try {
          if (m) this.handle(sessionId, brain, m);
        } catch (err) {
          // One message failing does not drop the ones after it.
          console.error(`corral: a message from the brain of ${sessionId} failed: ${errorText(err)}`);
        }
      }
      appendRun();
    };
    brain.out.collect(handleAll, () => !denied && calls.some((id) => brain.calls.has(id)));
  }

  private serve(sessionId: string, brain: RunningBrain, m: BrainRequest): void {
    const fail = (err: unknown) => this.send(sessionId, brain, { t: 'res', id: m.id, ok: false, error: errorText(err) });
    try {
      switch (m.op) {
        case 'emit':
          return this.append(sessionId, brain, [{ id: m.id, events: m.args.events, key: m.args.key }]);
        case 'execute':
          return void this.execute(sessionId, brain, m).catch(fail);
        case 'readEvents':
          // Bounded by bytes as well: a page of events of up to 4 MiB each would not be.
          return this.reply(sessionId, brain, m.id, this.opts.log.getEvents(sessionId, boundedSlice(m.args.slice)));
        case 'readPage':
          return this.reply(sessionId, brain, m.id, this.opts.log.getEventPage(sessionId, boundedSlice(m.args.slice)));
        case 'agent':
          return this.reply(sessionId, brain, m.id, this.opts.log.getSession(sessionId).record.agent);
        case 'hands':
          return this.reply(sessionId, brain, m.id, this.opts.hands.list(sessionId));
        case 'mcpTools':
          if (!this.opts.mcp) return this.reply(sessionId, brain, m.id, []);
          return void this.opts.mcp.tools(sessionId).then((tools) => this.reply(sessionId, brain, m.id, tools), fail);
        case 'mcpCall':
          return void this.mcpCall(sessionId, brain, m).catch(fail);
      }
    } catch (err) {
      fail(err);
    }
  }

  private reply(sessionId: string, brain: RunningBrain, id: number, value: unknown): void {
    this.send(sessionId, brain, { t: 'res', id, ok: true, value });
  }

  /**
   * Appends for a brain and answers each request with `answer(appended)` (default: the events).
   * Several (a batch's emits) are committed together, each answered, or failing, on its own. The
   * brain's own appends reach it in the replies; anything appended meanwhile (by a listener)
   * follows them, so the brain sees the log in order.
   */
  private append(sessionId: string, brain: RunningBrain, reqs: { id: number; events: EventInput[]; key: string; answer?: (out: LoggedEvent[]) => unknown }[]): void {
    brain.held = [];
    const own = new Set<number>();
    let others: LoggedEvent[];
    try {
      const groups = reqs.map((r) => ({ events: r.events, key: `brain:${r.key}` }));
      let results: (LoggedEvent[] | Error)[];
      try {
        results = groups.length === 1 ? [this.opts.log.emitEvents(sessionId, groups[0]!.events, groups[0]!.key)] : this.opts.log.emitEventGroups(sessionId, groups);
      } catch (err) {
        results = reqs.map(() => (err instanceof Error ? err : new Error(String(err))));
      }
      reqs.forEach((r, i) => {
        const out = results[i]!;
        if (out instanceof Error) return this.send(sessionId, brain, { t: 'res', id: r.id, ok: false, error: errorText(out) });
        for (const e of out) {
          own.add(e.seq);
          if (e.type === 'agent.tool_use' && brain.loggedCalls.size < MAX_LOGGED_CALLS) brain.loggedCalls.add(e.id);
        }
        this.reply(sessionId, brain, r.id, r.answer ? r.answer(out) : out);
      });
    } finally {
      others = (brain.held ?? []).filter((e) => !own.has(e.seq));
      brain.held = undefined;
    }
    if (others.length) this.send(sessionId, brain, { t: 'events', events: others });
  }

  /**
   * Runs a tool call and records its result as the call ends, whether or not its brain is still
   * there (a brain that died meanwhile had the call stopped: the outcome says so). A fresh brain
   * that answered the call first ("outcome unknown") keeps its answer: both use the same key.
   */
  private async execute(sessionId: string, brain: RunningBrain, m: BrainRequest<'execute'>): Promise<void> {
    // Only a call in the log runs (a brain sends it right behind its append, which may have failed):
    // one this brain's append just made is, else the log says.
    if (!brain.loggedCalls.delete(m.args.toolUseId) && this.opts.log.findEvent(sessionId, m.args.toolUseId)?.type !== 'agent.tool_use') {
      throw new Error(`${m.args.toolUseId} is not a logged tool call of this session`);
    }
    const ctrl = new AbortController();
    brain.calls.set(m.id, ctrl);
    let outcome;
    try {
      outcome = await this.opts.hands.execute(sessionId, m.args.hand, m.args.name, m.args.input, { signal: ctrl.signal, toolUseId: m.args.toolUseId });
    } finally {
      brain.calls.delete(m.id);
    }
    // A host shutting down stopped the call: the next host's brain reports its outcome unknown.
    if (this.stopped) return;
    this.append(sessionId, brain, [{ id: m.id, events: [toolResultEvent(m.args.toolUseId, outcome)], key: resultKey(m.args.toolUseId), answer: (out) => out[0] }]);
  }

  /** An MCP call, recorded as it ends like a hand's (see execute). */
  private async mcpCall(sessionId: string, brain: RunningBrain, m: BrainRequest<'mcpCall'>): Promise<void> {
    const ctrl = new AbortController();
    brain.calls.set(m.id, ctrl);
    let outcome;
    try {
      outcome = this.opts.mcp
        ? await this.opts.mcp.call(sessionId, m.args.server, m.args.tool, m.args.input, ctrl.signal)
        : { content: 'This host has no MCP client.', isError: true };
    } finally {
      brain.calls.delete(m.id);
    }
    if (this.stopped) return;
    this.append(sessionId, brain, [{ id: m.id, events: [mcpToolResultEvent(m.args.toolUseId, outcome)], key: resultKey(m.args.toolUseId), answer: (out) => out[0] }]);
  }

  private onBrainExit(sessionId: string, brain: RunningBrain, code: number | null, signal: string | null): void {
    if (this.running.get(sessionId) !== brain) return;
    this.running.delete(sessionId);
    // Its MCP connections go with it (a new brain connects and lists the tools again).
    void this.opts.mcp?.closeSession(sessionId);
    this.liveText.clear(sessionId);
    // Whatever the dead brain started on a hand is stopped: its outcome is reported as unknown.
    for (const c of brain.calls.values()) c.abort();
    this.opts.logger?.[code === 0 ? 'info' : 'warn']({ session_id: sessionId, pid: brain.child.pid, code, signal }, code === 0 ? 'brain exited' : 'brain crashed');
    if (this.stopped) return;
    const log = this.opts.log;
    if (!log.findSession(sessionId)) return;
    // Gone idle having seen every input, and exited cleanly: nothing is left for a brain.
    if (code === 0 && brain.idleThrough !== undefined && brain.lastInput <= brain.idleThrough) return;
    // Crashed (or input arrived as it left): a fresh brain works out from the log what is pending.
    const now = Date.now();
    const recent = (this.restarts.get(sessionId) ?? []).filter((t) => now - t < 60_000);
    recent.push(now);
    this.restarts.set(sessionId, recent);
    if (recent.length > (this.opts.maxRestartsPerMinute ?? 20)) {
      const why = `the brain stopped ${recent.length} times in a minute (last: ${signal ?? `exit code ${code}`}); the session is stopped until new input arrives`;
      const last = log.emitEvent(sessionId, { type: 'session.error', error: { type: 'unknown_error', message: why, retry_status: { type: 'terminal' } } });
      log.emitEvent(sessionId, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, handled_through: last.seq });
      this.restarts.delete(sessionId);
      this.opts.logger?.error({ session_id: sessionId, restarts: recent.length }, 'brain crash loop: session stopped until new input');
      return;
    }
    this.opts.logger?.warn({ session_id: sessionId, restarts: recent.length }, 'brain stopped with work pending: starting a new one');
    this.wake(sessionId);
  }
}
