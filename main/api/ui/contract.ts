import { z } from 'zod';
import type { LiveDelta } from '../../brain/live-text';
import type { UiCallName, UiStreamName } from './methods';

/**
 * The one contract for every renderer-facing call: name, zod input schema, output type.
 * Main validates every input against these schemas (IPC and WebSocket alike); the renderer
 * imports only the types.
 */

const sessionId = z.string().min(1).max(100);
const position = z.number().int().min(0);

/** A session as the UI lists it. */
export interface SessionSummary {
  id: string;
  title: string | null;
  status: 'rescheduling' | 'running' | 'idle' | 'terminated';
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** Position of the newest event. */
  last_seq: number;
  agent_name: string | null;
  parent_id: string | null;
  fork_seq: number | null;
}

/** An event as the UI sees it: the log's event (Managed Agents shape plus `seq`). */
export interface UiEvent {
  id: string;
  type: string;
  processed_at: string;
  seq: number;
  [field: string]: unknown;
}

/** A change to the session list. */
export interface SessionListChange {
  kind: 'created' | 'updated' | 'deleted';
  session: SessionSummary | null;
  sessionId: string;
}

export const uiSchemas = {
  listSessions: z.object({ limit: z.number().int().min(1).max(1000).optional(), includeArchived: z.boolean().optional() }).strict(),
  getSession: z.object({ sessionId }).strict(),
  getEvents: z
    .object({
      sessionId,
      after: position.optional(),
      before: position.optional(),
      from: position.optional(),
      to: position.optional(),
      types: z.array(z.string().min(1).max(100)).max(100).optional(),
      order: z.enum(['asc', 'desc']).optional(),
      limit: z.number().int().min(1).max(5000).optional(),
    })
    .strict(),
  sendMessage: z.object({ sessionId, text: z.string().min(1).max(1_000_000) }).strict(),
  watchSessions: z.object({}).strict(),
  /** Events after `after` (default: from the start), then each new one as it is committed. */
  watchEvents: z.object({ sessionId, after: position.optional() }).strict(),
  /** Text the model is writing now (not logged): shown until its event arrives via watchEvents. */
  watchLiveText: z.object({ sessionId }).strict(),
} satisfies Record<UiCallName | UiStreamName, z.ZodType>;

export type UiInput<N extends UiCallName | UiStreamName> = z.input<(typeof uiSchemas)[N]>;

/** Output of each call. */
export interface UiCallOutputs {
  listSessions: SessionSummary[];
  getSession: SessionSummary;
  getEvents: UiEvent[];
  sendMessage: UiEvent;
}

/** Live text of an event not logged yet (the Managed Agents event_start / event_delta shapes). */
export type LiveTextItem = LiveDelta;

/** Item type of each stream. */
export interface UiStreamItems {
  watchSessions: SessionListChange;
  watchEvents: UiEvent;
  watchLiveText: LiveTextItem;
}

/** An error as it crosses to the renderer: a kind the UI can branch on, and a message. */
export interface UiError {
  kind: 'invalid_input' | 'not_found' | 'internal';
  message: string;
}

/** The API the renderer holds, whichever transport (IPC in the app, WebSocket in a browser). */
export type CorralApi = {
  [N in UiCallName]: (input: UiInput<N>) => Promise<UiCallOutputs[N]>;
} & {
  [N in UiStreamName]: (input: UiInput<N>, onItem: (item: UiStreamItems[N]) => void, onError?: (error: UiError) => void) => () => void;
};
