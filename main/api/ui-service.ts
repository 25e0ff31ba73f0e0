import { z } from 'zod';
import type { SessionLog } from '../session/store';
import { LogInputError, SessionNotFoundError, type SessionRow } from '../session/types';
import { uiSchemas, type SessionSummary, type UiCallOutputs, type UiError, type UiStreamItems } from './contract';
import type { UiCallName, UiStreamName } from './ui-methods';

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

/** The summary the session list shows, from the log's record of a session. */
export function summarise(row: SessionRow): SessionSummary {
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
  };
}

/** What the UI service needs from the host. */
export interface UiServiceDeps {
  log: SessionLog;
  /** Lists sessions newest first (the API layer's pagination is not needed here). */
  listSessions(limit: number, includeArchived: boolean): SessionRow[];
  /** Live text of a session's brain, when the host runs brains. */
  subscribeLiveText?(sessionId: string, listener: (item: UiStreamItems['watchLiveText']) => void): () => void;
}

/**
 * Every renderer-facing call and stream, transport-agnostic: the IPC registration (desktop)
 * and the WebSocket channel (serve) both validate through here.
 */
export interface UiService {
  call<N extends UiCallName>(name: N, input: unknown): Promise<UiCallOutputs[N]>;
  watch<N extends UiStreamName>(name: N, input: unknown, push: (item: UiStreamItems[N]) => void): () => void;
}

export function createUiService(deps: UiServiceDeps): UiService {
  const { log } = deps;
  const calls: { [N in UiCallName]: (input: z.output<(typeof uiSchemas)[N]>) => UiCallOutputs[N] } = {
    listSessions: (i) => deps.listSessions(i.limit ?? 200, i.includeArchived ?? false).map(summarise),
    getSession: (i) => summarise(log.getSession(i.sessionId)),
    getEvents: ({ sessionId, ...slice }) => log.getEvents(sessionId, slice),
    sendMessage: (i) => log.emitEvent(i.sessionId, { type: 'user.message', content: [{ type: 'text', text: i.text }] }),
  };
  const streams: { [N in UiStreamName]: (input: z.output<(typeof uiSchemas)[N]>, push: (item: UiStreamItems[N]) => void) => () => void } = {
    watchSessions: (_i, push) =>
      log.subscribeSessions((change) =>
        push({ kind: change.kind, sessionId: change.sessionId, session: change.kind === 'deleted' ? null : summariseOrNull(log, change.sessionId) }),
      ),
    watchEvents: ({ sessionId, after }, push) => {
      log.getSession(sessionId); // not found → error before subscribing
      // Subscribe first and buffer, then read the backlog: no event can fall between the two.
      let last = after ?? 0;
      let live = false;
      const buffered: UiStreamItems['watchEvents'][] = [];
      const stop = log.subscribe(sessionId, (e) => (live ? deliver(e) : buffered.push(e)));
      const deliver = (e: UiStreamItems['watchEvents']) => {
        if (e.seq <= last) return;
        last = e.seq;
        push(e);
      };
      for (;;) {
        const page = log.getEvents(sessionId, { after: last, limit: 5000 });
        page.forEach(deliver);
        if (page.length < 5000) break;
      }
      buffered.forEach(deliver);
      live = true;
      return stop;
    },
    watchLiveText: ({ sessionId }, push) => {
      log.getSession(sessionId);
      return deps.subscribeLiveText?.(sessionId, push) ?? (() => {});
    },
  };
  return {
    async call(name, input) {
      const parsed = uiSchemas[name].parse(input ?? {});
      return (calls[name] as (i: unknown) => UiCallOutputs[typeof name])(parsed);
    },
    watch(name, input, push) {
      const parsed = uiSchemas[name].parse(input ?? {});
      return (streams[name] as (i: unknown, p: typeof push) => () => void)(parsed, push);
    },
  };
}

function summariseOrNull(log: SessionLog, id: string): SessionSummary | null {
  const row = log.findSession(id);
  return row ? summarise(row) : null;
}
