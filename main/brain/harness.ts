import type { HandInfo } from '../hands/registry';
import type { ToolOutcome } from '../hands/types';
import type { EventSlice, LoggedEvent } from '../session/types';
import { agentConfigOf, READ_SESSION_TOOL, type AgentConfig } from './agent-config';
import type { ConfirmedCall, LogAnalysis } from './analyse';
import { deniedText, evaluateCall, evaluateMcpCall, notAvailableText } from './permissions';
import type { BrainEventInput } from './brain-event-schema';
import type { ToolDefinition } from '../hands/tools/definitions';
import { fitToLog, type DroppedInput } from './fit-event';
import { ModelError, type ModelCaller, type ModelFailure, type ModelUsage } from './model';
import { blockToEvent, requestEnd, requestStart, toolResult, ZERO_USAGE } from './harness-events';
import { BlockAppends } from './block-appends';
import { newId } from '../db/ids';
import type { LiveDelta } from './live-text';
import { retryDelayMs, sleep, type RetryPolicy } from './retry';
import { resultEventFor, resultKey } from './tool-result-event';
import { callsCutShort, serverBlockEvent, serverToolDefinitions } from './server-tools';
import type { McpToolDefinition } from '../mcp/names';
import type { SessionView } from './session-view';
import { readSessionTool } from './read-session-tool';
import { sendAhead, streamStep, type HeldRequest } from './held-request';

/** Everything a brain does to the world, through the host. */
export interface BrainIO {
  /** A slice of the session's log (the model's read_session_events tool). */
  readEvents(slice: EventSlice): Promise<LoggedEvent[]>;
  /** Appends atomically; a repeated key returns what the first append made. */
  emit(events: BrainEventInput[], key: string): Promise<LoggedEvent[]>;
  /**
   * Runs a tool on one of the session's hands (`hand` names it when there are several); the host
   * records its `agent.tool_result` as the call ends and answers with it.
   */
  execute(call: { name: string; input: Record<string, unknown>; hand?: string; toolUseId: string }, signal: AbortSignal): Promise<LoggedEvent>;
  /** The hands the session holds (names, what they are, their tools). */
  hands(): Promise<HandInfo[]>;
  /** The session's agent snapshot. */
  agent(): Promise<Record<string, unknown> | undefined>;
  /** Pushes live text (the API's event_start / event_delta shapes; never logged). */
  delta?(d: LiveDelta): void;
  /**
   * Keeps what the calls above queue from now on until the returned release is called (they
   * otherwise leave together at the end of the tick). Only for messages whose reply is not
   * awaited meanwhile.
   */
  hold?(): () => void;
  /** Tool definitions of the built-in tools, given the session's hands. */
  toolDefinitions(names: readonly string[], hands: readonly HandInfo[]): ToolDefinition[];
  /** The enabled tools of the session's MCP servers (the host holds the connections and tokens). */
  mcpTools?(): Promise<McpToolDefinition[]>;
  /** Runs an `agent.mcp_tool_use` through the host, which records its `agent.mcp_tool_result` and answers with it. */
  mcpCall?(call: { server: string; tool: string; input: Record<string, unknown>; toolUseId: string }, signal: AbortSignal): Promise<LoggedEvent>;
}

/** Retry policy of model requests. */
export type HarnessOptions = RetryPolicy & {
  /** Source of jitter for retry waits (tests pin it). */
  random?: () => number;
};

/** Corral's own tools that only read the session's log: never held for the user. */
const ALWAYS_ALLOWED: ReadonlySet<string> = new Set([READ_SESSION_TOOL.name]);

/**
 * The harness: works out from the log what is pending, and does it — model requests, tool
 * calls, status changes — one logged step at a time. It holds nothing that must survive: a
 * fresh harness on the same log continues where a dead one stopped. Every append carries an
 * idempotency key derived from the log, so a step repeated after a crash appends nothing twice.
 * What it knows of the log is a SessionView, kept current as events arrive: a step costs the
 * same at the thousandth event as at the first.
 */
export class Harness {
  private abort = new AbortController();
  /** Tool calls this harness logged itself and has not answered yet (their outcome is known to it). */
  private readonly loggedHere = new Set<string>();
  private agentConfig?: AgentConfig;
  private hands: HandInfo[] = [];
  private handsVersion = -1;
  /** The request's tools for the current agent and hands (kept while neither changes). */
  private tools?: ToolDefinition[];
  /** The session's MCP tools by model-facing name (asked of the host each step: it caches them). */
  private mcp = new Map<string, McpToolDefinition>();
  private mcpSig = '';
  /** The next request, sent ahead while the step's one tool call runs (held-request.ts). */
  private held?: HeldRequest;
  /** The result of the last call run here (a held request is used only with its own call's). */
  private lastResult?: LoggedEvent;

  constructor(
    private readonly io: BrainIO,
    private readonly model: ModelCaller,
    private readonly opts: HarnessOptions,
    private readonly view: SessionView,
  ) {}

  /** Stops the model stream or tool that is running now (a `user.interrupt` arrived). */
  interrupt(): void {
    this.abort.abort();
  }

  /** Runs until the session has nothing pending. */
  async run(): Promise<void> {
    await this.view.catchUp();
    // The agent snapshot and the hands once per run; hands again only when they change.
    const version = this.view.handsVersion;
    const [agent, hands] = await Promise.all([this.io.agent(), this.io.hands()]);
    this.agentConfig = agentConfigOf(agent);
    this.useHands(hands, version);
    for (;;) {
      await this.view.catchUp();
      const a = this.view.analysis();
      if (this.abort.signal.aborted && !a.interruptPending) this.abort = new AbortController();
      // A held request is for the model step that follows its call's result, and nothing else.
      if (this.held && (a.interruptPending || a.openRequest || a.unansweredToolUses.length + a.confirmedToolUses.length > 0 || !a.needsModel)) this.dropHeld();
      if (a.interruptPending) await this.finishInterrupted(a);
      else if (a.openRequest) await this.closeAbandoned(a.openRequest);
      else if (a.unansweredToolUses.length > 0) await this.answerUnknown(a.unansweredToolUses);
      else if (a.confirmedToolUses.length > 0) await this.takeUpConfirmed(a.confirmedToolUses, a.status);
      else if (a.needsModel) await this.modelStep(a);
      else if (a.awaitingConfirmation.length + a.pendingCustomToolUses.length > 0 && a.status !== 'idle') {
        // Calls held for the user: the session waits for them (the API's requires_action).
        const waiting = [...a.awaitingConfirmation, ...a.pendingCustomToolUses].sort((x, y) => x.seq - y.seq);
        await this.idle({ type: 'requires_action', event_ids: waiting.map((e) => e.id) }, a.lastSeq);
        return;
      } else if (a.status === 'running' || a.status === 'rescheduling') {
        await this.idle({ type: 'end_turn' }, a.lastSeq);
        return;
      } else return;
    }
  }

  private dropHeld(): void {
    this.held = void this.held?.call.cancel();
  }

  private useHands(hands: HandInfo[], version: number): void {
    this.hands = hands;
    this.handsVersion = version;
    this.tools = undefined;
  }

  private async toolsNow(cfg: AgentConfig): Promise<ToolDefinition[]> {
    if (this.view.handsVersion !== this.handsVersion) {
      const version = this.view.handsVersion;
      this.useHands(await this.io.hands(), version);
    }
    if (cfg.usesMcp && this.io.mcpTools) {
      // The host lists a server's tools once and keeps them until the server says they changed.
      // A failed listing keeps the tools known so far (the host reports server failures itself).
      const list = await this.io.mcpTools().catch(() => [...this.mcp.values()]);
      const sig = JSON.stringify(list);
      if (sig !== this.mcpSig) {
        this.mcpSig = sig;
        this.mcp = new Map(list.map((t) => [t.name, t]));
        this.tools = undefined;
      }
    }
    const mcpDefs = [...this.mcp.values()].map(({ name, description, input_schema }) => ({ name, description, input_schema }) as ToolDefinition);
    this.tools ??= [...this.io.toolDefinitions(cfg.builtinTools, this.hands), ...serverToolDefinitions(cfg.serverTools), ...cfg.customTools, ...mcpDefs, READ_SESSION_TOOL];
    return this.tools;
  }

  /** Appends, and folds what was appended into the view before going on. */
  private async emit(events: BrainEventInput[], key: string): Promise<LoggedEvent[]> {
    // Nothing a brain writes is over the log's cap: the append would fail and the step be lost.
    const out = await this.io.emit(events.flatMap((e) => fitToLog(e) as BrainEventInput[]), key);
    this.view.accept(out);
    return out;
  }

  private async idle(stopReason: Extract<BrainEventInput, { type: 'session.status_idle' }>['stop_reason'], handledThrough: number): Promise<void> {
    await this.emit([{ type: 'session.status_idle', stop_reason: stopReason, stop_details: null, handled_through: handledThrough }], `idle:${handledThrough}`);
  }

  private async finishInterrupted(a: LogAnalysis): Promise<void> {
    let last = a.lastSeq;
    // Calls held for the user were never run: the interrupt answers them so.
    for (const tu of [...a.awaitingConfirmation, ...a.confirmedToolUses.map((c) => c.use)]) {
      const [e] = await this.emit([toolResult(tu, 'Not run: the session was interrupted while this call waited for the user.', true)], resultKey(tu.id));
      last = Math.max(last, e!.seq);
    }
    for (const tu of a.unansweredToolUses) {
      const text = this.loggedHere.has(tu.id)
        ? 'Not run: the session was interrupted before this call started.'
        : 'Outcome unknown: the brain stopped while this call was in flight, then the session was interrupted. It may or may not have run; check before repeating it.';
      const [e] = await this.emit([toolResult(tu, text, true)], resultKey(tu.id));
      last = Math.max(last, e!.seq);
    }
    if (a.openRequest) {
      const [e] = await this.emit([requestEnd(a.openRequest.id, true, ZERO_USAGE, { message: 'interrupted' })], `mend:${a.openRequest.id}`);
      last = Math.max(last, e!.seq);
    }
    await this.idle({ type: 'end_turn' }, last);
    this.abort = new AbortController();
  }

  private async closeAbandoned(open: LoggedEvent): Promise<void> {
    await this.emit([requestEnd(open.id, true, ZERO_USAGE, { message: 'abandoned: the brain stopped during this request; it is sent again' })], `mend:${open.id}`);
  }

  private async answerUnknown(toolUses: LoggedEvent[]): Promise<void> {
    for (const tu of toolUses) {
      await this.emit(
        [
          toolResult(
            tu,
            'Outcome unknown: the brain stopped while this call was in flight. It may or may not have run (files written, commands started); check the state before repeating it.',
            true,
            { outcome: 'unknown' },
          ),
        ],
        resultKey(tu.id),
      );
    }
  }

  /**
   * Runs the calls the user answered: a denial is the model's error result with the user's
   * reason; an allowed call is marked as started in the log first (a brain that takes over after
   * a crash then answers it "outcome unknown" rather than running it twice).
   */
  private async takeUpConfirmed(confirmed: ConfirmedCall[], status: LogAnalysis['status']): Promise<void> {
    let running = status === 'running';
    for (const { use, confirmation } of confirmed) {
      if (this.abort.signal.aborted) return; // the loop answers the rest
      if (confirmation.result !== 'allow') {
        await this.emit([toolResult(use, deniedText(confirmation.deny_message as string | null | undefined), true, { denied: true })], resultKey(use.id));
        continue;
      }
      await this.emit([{ type: 'session.status_running', run_confirmed: use.id }], `runc:${use.id}`);
      running = true;
      await this.runTool(use, this.abort.signal);
    }
    // A status change for a turn made only of denials (the session was idle, waiting).
    if (!running) await this.emit([{ type: 'session.status_running' }], `running:${confirmed.at(-1)!.confirmation.id}`);
  }

  private async modelStep(a: LogAnalysis): Promise<void> {
    const cfg = this.agentConfig!;
    const tools = await this.toolsNow(cfg);
    // Neither the status nor the span waits for its commit: both leave with the request (see the
    // hold below), in order, and the host logs them while the model works: a new turn's request
    // goes out without a round trip to the host first. Blocks and the end follow them in order.
    const running = a.status !== 'running' ? this.emit([{ type: 'session.status_running' }], `running:${a.lastSeq}`) : undefined;
    const opts = { model: cfg.model, system: cfg.system, tools, maxTokens: cfg.maxTokens, contextWindowTokens: cfg.contextWindowTokens, modelOptions: cfg.modelOptions };
    const built = this.view.context.build(opts);
    const held = this.held;
    this.held = undefined;
    const startId = newId.event();
    const started = Promise.all([this.emit([requestStart(startId, built)], `mreq:${a.lastSeq}`), running]).then(([[e]]) => {
      // Only a second brain on the session could have logged this step already.
      if (e!.id !== startId) throw new Error(`model request ${e!.id} was already logged for this step`);
      return e!;
    });
    started.catch(() => {}); // awaited below
    // The span leaves right after the request does (which the caller writes before the next turn
    // of the event loop): the host, which forwards the request to the model, gets the request
    // first and logs the span while the model works, instead of forwarding behind the commit.
    const releaseSpan = this.io.hold?.();
    if (releaseSpan) setImmediate(releaseSpan);
    const customNames = new Set(cfg.customTools.map((t) => t.name));
    const offered = new Set(tools.map((t) => t.name));
    const evaluate = (name: string, mcp?: McpToolDefinition) => (mcp ? evaluateMcpCall(mcp.mcp_server_name, mcp.tool_name, cfg.permissions) : evaluateCall(name, offered, cfg.permissions, ALWAYS_ALLOWED));
    // A call's append is held from its block's end until the next block starts or the reply ends,
    // so that it leaves with the request's end and the call itself, in one message the host
    // handles in one go; the host, which forwards the rest of the reply, is not busy logging the
    // call meanwhile (bench:brain).
    let releaseCalls: (() => void) | undefined;
    const releaseHeldCalls = () => {
      releaseCalls?.();
      releaseCalls = undefined;
    };
    const blocks = new BlockAppends((events, key) => this.emit(events, key), { id: startId, logged: started }, this.loggedHere, () => {
      releaseCalls ??= this.io.hold?.();
    });
    const logged = blocks.logged;
    const signal = this.abort.signal;
    // Text and thinking blocks get their event id when they start, so live text can name the
    // event it will become.
    const ids = new Map<number, string>();
    const sentAt = Date.now();
    let firstTokenMs: number | undefined;
    let result: { stopReason: string; usage: ModelUsage };
    try {
      result = await streamStep(
        this.model,
        built,
        held && { held, result: this.lastResult, view: this.view, opts },
        {
          onBlockStart: (index, type) => {
            releaseHeldCalls();
            firstTokenMs ??= Date.now() - sentAt;
            if (type !== 'text' && type !== 'thinking') return;
            const id = newId.event();
            ids.set(index, id);
            this.io.delta?.({ type: 'event_start', event: { id, type: type === 'text' ? 'agent.message' : 'agent.thinking' } });
          },
          onBlock: async (block, index) => {
            const input = serverBlockEvent(block, logged) ?? blockToEvent(block, customNames, ids.get(index), this.mcp, evaluate);
            if (input) await blocks.add(input, index);
          },
          onTextDelta: (index, text) => {
            const id = ids.get(index);
            if (id && text) this.io.delta?.({ type: 'event_delta', event_id: id, delta: { type: 'content_delta', content: { type: 'text', text }, index: 0 } });
          },
        },
        signal,
      );
    } catch (err) {
      const failure: ModelFailure = err instanceof ModelError ? err.failure : { errorType: 'model_request_failed_error', message: String(err), retryable: true };
      releaseHeldCalls();
      await blocks.settled().catch(() => {});
      await this.afterFailure(await started, failure, logged, a);
      return;
    }
    // Calls to tools that were not offered are answered at once; calls held for the user wait
    // (MCP calls too, under their mcp_toolset's policy).
    const calls = logged.filter((e) => (e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use') && e.evaluated_permission === 'allow');
    // The span's append went first and is checked below (blocks.settled): not waited for here.
    const ended = this.emit([{ ...requestEnd(startId, false, result.usage, undefined, result.stopReason), ...(firstTokenMs !== undefined ? { first_token_ms: firstTokenMs } : {}) }], `mend:${startId}`);
    // The host handles a brain's messages in order: the end is logged before the first call
    // starts, so the call goes out now rather than a round trip later.
    const first = calls.length > 0 && !signal.aborted ? this.runTool(calls[0]!, signal) : undefined;
    first?.catch(() => {}); // awaited below, after the end
    releaseHeldCalls(); // the calls' appends, the end and the first call leave together
    // The request after a lone call's result goes ahead (held until it is in), built once this
    // process has slept: the host, woken by the call on this core, runs it first.
    if (first) setTimeout(() => this.lastResult?.tool_use_id !== calls[0]!.id && (this.held = sendAhead(this.view, logged, opts, this.model, signal)));
    await ended;
    // A call's append failing is the host refusing this brain's own event: the step fails.
    await blocks.settled();
    for (const tu of logged.filter((e) => e.type === 'agent.tool_use' && e.evaluated_permission === 'deny')) {
      await this.emit([toolResult(tu, notAvailableText(String(tu.name)), true)], resultKey(tu.id));
    }
    for (const [i, tu] of calls.entries()) {
      const run = i === 0 ? first : signal.aborted ? undefined : this.runTool(tu, signal);
      if (!run) return; // interrupted: the loop answers the calls not run
      await run;
      this.loggedHere.delete(tu.id);
    }
  }

  /** Runs a call and sees its result logged (by the host as a hand's call ends, else here). */
  private async runTool(tu: LoggedEvent, signal: AbortSignal): Promise<void> {
    const input = (tu.input ?? {}) as Record<string, unknown>;
    let outcome: ToolOutcome;
    const dropped = tu.input_dropped as DroppedInput | undefined;
    if (dropped) outcome = { content: `Not run: ${dropped.reason}, so it was not kept. Send large content in several smaller calls.`, isError: true };
    else if (tu.type === 'agent.mcp_tool_use') {
      try {
        if (!this.io.mcpCall) throw new Error('this brain has no MCP client');
        const recorded = await this.io.mcpCall({ server: String(tu.mcp_server_name), tool: String(tu.name), input, toolUseId: tu.id }, signal);
        this.view.accept([recorded]);
        return;
      } catch (err) {
        outcome = { content: `The MCP call failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
      }
    } else if (tu.name === READ_SESSION_TOOL.name) outcome = await readSessionTool(this.io, input);
    else {
      const { hand, ...rest } = input;
      try {
        const recorded = await this.io.execute({ name: String(tu.name), input: rest, hand: typeof hand === 'string' ? hand : undefined, toolUseId: tu.id }, signal);
        this.view.accept([recorded]);
        this.lastResult = recorded;
        return;
      } catch (err) {
        outcome = { content: `The tool failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
      }
    }
    [this.lastResult] = await this.emit([resultEventFor(tu, outcome)], resultKey(tu.id));
  }

  private async afterFailure(start: LoggedEvent, failure: ModelFailure, logged: LoggedEvent[], a: LogAnalysis): Promise<void> {
    const [end] = await this.emit(
      [requestEnd(start.id, true, ZERO_USAGE, { type: failure.errorType, message: failure.message, ...(failure.status ? { status: failure.status } : {}) })],
      `mend:${start.id}`,
    );
    // Calls of a response cut short were never run: say so, so the transcript stays valid (after an interrupt the loop answers the hands' calls).
    for (const { use: tu, serverResult } of callsCutShort(logged)) {
      if (serverResult || !failure.aborted) await this.emit([serverResult ?? toolResult(tu, 'Not run: the model response was cut off before it completed.', true)], resultKey(tu.id));
    }
    if (failure.aborted) return; // the interrupt is handled by the loop
    const attempt = a.failedRequestsInARow + 1;
    if (failure.retryable && attempt <= this.opts.maxRetries) {
      const wait = retryDelayMs(attempt, failure, this.opts, this.opts.random);
      await this.emit([{ type: 'session.status_rescheduled', retry_in_ms: wait, attempt, error_type: failure.errorType }], `resched:${end!.id}`);
      await sleep(wait, this.abort.signal);
      return;
    }
    const [err] = await this.emit(
      [
        {
          type: 'session.error',
          error: { type: failure.errorType, message: failure.message, retry_status: { type: failure.retryable ? 'exhausted' : 'terminal' } },
        },
      ],
      `err:${end!.id}`,
    );
    await this.idle({ type: failure.retryable ? 'retries_exhausted' : 'end_turn' }, err!.seq);
  }
}
