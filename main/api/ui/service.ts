import { waitingForUser } from './waiting';
import { z } from 'zod';
import type { Host } from '../../host';
import { hostCalls } from './calls';
import type { SessionLog } from '../../session/store';
import { LogInputError, SessionNotFoundError, type SessionRow } from '../../session/types';
import { READER_PAGE_BYTES } from '../reader-limits';
import { uiSchemas, type LiveTextItem, type SessionSummary, type UiCallOutputs, type UiError, type UiInput, type UiStreamItems } from './contract';
import type { HostCallName, LogCallName, UiCallName, UiStreamName } from './methods';
import { watchEvents } from './watch-events';
import { watchWorkers } from './watch-workers';

/** An error meant for the renderer, already in its wire shape. */
export class UiServiceError extends Error {
  constructor(readonly ui: UiError) {
    super(ui.message);
  }
}

/** Turns any thrown value into the error the renderer sees; internals are not leaked. */
export function toUiError(err: unknown): UiError {
  if (err instanceof UiServiceError) return err.ui;
  if (err instanceof SessionNotFoundError) return { kind: 'not_found', message: err.message };
  if (err instanceof LogInputError) return { kind: 'invalid_input', message: err.message };
  if (err instanceof z.ZodError) {
    return { kind: 'invalid_input', message: err.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ') };
  }
  console.error('corral: UI call failed:', err);
  return { kind: 'internal', message: 'internal error (see the host log)' };
}

/** The summary the session list shows, from the log's record of a session (and its hands, when known). */
export function summarise(row: SessionRow, handsOf?: (sessionId: string) => SessionSummary['hands'], log?: Pick<SessionLog, 'getEvents'>): SessionSummary {
  const agent = row.record.agent as { name?: unknown } | undefined;
  return {
    id: row.id,
    title: typeof row.record.title === 'string' ? row.record.title : null,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    archived_at: row.archived_at,
    last_seq: row.last_seq,
    agent_name: typeof agent?.name === 'string' ? agent.name : null,
    parent_id: row.parent_id,
    fork_seq: row.fork_seq,
    agent_id: row.agent_id,
    environment_id: row.environment_id,
    usage: row.usage,
    ...(handsOf ? { hands: handsOf(row.id) } : {}),
    ...(log ? { waiting_for_user: waitingForUser(log, row) } : {}),
  };
}

/** What the UI service needs from the host. */
export interface UiServiceDeps {
  log: SessionLog;
  /** Live text of a session's brain, when the host runs brains. */
  subscribeLiveText?(sessionId: string, listener: (item: UiStreamItems['watchLiveText']) => void): () => void;
  /** The hands a session holds, for its summary. */
  handsOf?(sessionId: string): SessionSummary['hands'];
  /** The calls that need the whole host (main/api/ui/calls); absent, they answer "not available". */
  hostCalls?: HostCalls;
  /** The warm pools of hands, now and at each change (hand-pool.ts subscribe). */
  subscribeHandPools?(listener: (pools: UiStreamItems['watchHandPools']) => void): () => void;
  /** Bytes of events a watchEvents replay reads and sends at a time (default READER_PAGE_BYTES). */
  pageBytes?: number;
  /** Work items of machines that dial in, live (watch-workers.ts); absent, the stream sends nothing. */
  watchWorkers?(input: UiInput<'watchWorkers'>, push: (item: UiStreamItems['watchWorkers']) => void): () => void;
}

/** Implementations of the host calls, each given its input already validated. */
export type HostCalls = { [N in HostCallName]: (input: z.output<(typeof uiSchemas)[N]>) => UiCallOutputs[N] | Promise<UiCallOutputs[N]> };

/** The UI service of a host: whoever serves the UI (the shell's IPC, the HTTP server) makes one. */
export function uiServiceFor(host: Host): UiService {
  const calls = hostCalls(host);
  return createUiService({
    log: host.log,
    hostCalls: calls,
    handsOf: calls.handsOf,
    subscribeLiveText: host.brains ? (sessionId, listener) => host.brains!.subscribeDeltas(sessionId, listener) : undefined,
    subscribeHandPools: (listener) => host.hands.pool.subscribe((pools) => listener(pools.map(({ name: _name, ...p }) => p))),
    watchWorkers: (input, push) => watchWorkers(host, input, push),
  });
}

/**
 * Every renderer-facing call and stream, transport-agnostic: the IPC registration (desktop)
 * and the WebSocket channel (serve) both validate through here.
 */
export interface UiService {
  call<N extends UiCallName>(name: N, input: unknown): Promise<UiCallOutputs[N]>;
  /**
   * Starts a stream. A transport that sends bytes may give `pushJson`: a stream may then hand it
   * an item as the UTF-8 of its JSON, in parts (watchEvents does for the events it replays).
   */
  watch<N extends UiStreamName>(name: N, input: unknown, push: (item: UiStreamItems[N]) => void, flow?: StreamFlow, pushJson?: (json: readonly Buffer[]) => void): () => void;
}

/**
 * Flow control a transport offers its streams, so that a client that does not read costs a
 * bounded amount: what the transport buffers, not what the streams would send it.
 */
export interface StreamFlow {
  /** Resolves when the transport's send buffer has room for the next page. */
  drained?(): Promise<void>;
  /** True while the send buffer is full: pages stop early, and live text is dropped. */
  congested?(): boolean;
}

/** Bytes of events in one reply of getEvents at most (plus the event that reaches it). */
const CALL_REPLY_BYTES = 4 * 1024 * 1024;
/** Live-text events remembered as dropped (older ones are long finished). */
const MAX_DROPPED_LIVE = 256;

export function createUiService(deps: UiServiceDeps): UiService {
  const { log } = deps;
  const summary = (row: SessionRow) => summarise(row, deps.handsOf, log);
  const calls: { [N in LogCallName]: (input: z.output<(typeof uiSchemas)[N]>) => UiCallOutputs[N] } = {
    listSessions: (i) => log.listSessions({ limit: i.limit ?? 200, includeArchived: i.includeArchived ?? false }).data.map(summary),
    getSession: (i) => summary(log.getSession(i.sessionId)),
    getEvents: ({ sessionId, ...slice }) => log.getEvents(sessionId, { ...slice, maxBytes: CALL_REPLY_BYTES }),
    sendMessage: (i) => log.emitEvent(i.sessionId, { type: 'user.message', content: [{ type: 'text', text: i.text }] }),
  };
  const streams: {
    [N in UiStreamName]: (input: z.output<(typeof uiSchemas)[N]>, push: (item: UiStreamItems[N]) => void, flow?: StreamFlow, pushJson?: (json: readonly Buffer[]) => void) => () => void;
  } = {
    watchSessions: (_i, push) =>
      log.subscribeSessions((change) =>
        push({ kind: change.kind, sessionId: change.sessionId, session: change.kind === 'deleted' ? null : summariseOrNull(log, change.sessionId, deps.handsOf) }),
      ),
    watchEvents: ({ sessionId, after }, push, flow, pushJson) => {
      log.getSession(sessionId); // not found → error before subscribing
      return watchEvents({ log, sessionId, after: after ?? 0, push, pushJson, flow, pageBytes: deps.pageBytes ?? READER_PAGE_BYTES });
    },
    watchLiveText: ({ sessionId }, push, flow) => {
      log.getSession(sessionId);
      return deps.subscribeLiveText?.(sessionId, dropWhileCongested(push, flow)) ?? (() => {});
    },
    watchHandPools: (_i, push) => {
      if (deps.subscribeHandPools) return deps.subscribeHandPools(push);
      push([]);
      return () => {};
    },
    watchWorkers: (input, push) => deps.watchWorkers?.(input, push) ?? (() => {}),
  };
  return {
    async call(name, input) {
      const parsed = uiSchemas[name].parse(input ?? {});
      const own = (calls as Record<string, ((i: unknown) => unknown) | undefined>)[name];
      const more = (deps.hostCalls as Record<string, ((i: unknown) => unknown) | undefined> | undefined)?.[name];
      const fn = own ?? more;
      if (!fn) throw new UiServiceError({ kind: 'invalid_input', message: `${name} is not available on this host` });
      return (await fn(parsed)) as UiCallOutputs[typeof name];
    },
    watch(name, input, push, flow, pushJson) {
      const parsed = uiSchemas[name].parse(input ?? {});
      return (streams[name] as (i: unknown, p: typeof push, f?: StreamFlow, j?: typeof pushJson) => () => void)(parsed, push, flow, pushJson);
    },
  };
}

/**
 * Live text for a client that is behind is dropped rather than queued: once an item of an event
 * is dropped, so is the rest of that event's text (the client never shows a gap inside it; the
 * logged event, which watchEvents delivers, carries all of it).
 */
function dropWhileCongested(push: (item: LiveTextItem) => void, flow: StreamFlow | undefined): (item: LiveTextItem) => void {
  if (!flow?.congested) return push;
  const dropped = new Set<string>();
  return (item) => {
    const id = item.type === 'event_start' ? item.event.id : item.event_id;
    if (!dropped.has(id) && !flow.congested!()) return push(item);
    dropped.add(id);
    if (dropped.size > MAX_DROPPED_LIVE) dropped.delete(dropped.values().next().value!);
  };
}

function summariseOrNull(log: SessionLog, id: string, handsOf?: UiServiceDeps['handsOf']): SessionSummary | null {
  const row = log.findSession(id);
  return row ? summarise(row, handsOf, log) : null;
}
