import type { EventInput, EventSlice, LoggedEvent } from '../session/types';
import type { ToolOutcome } from '../hands/types';
import type { HandInfo } from '../hands/registry';
import type { LiveDelta } from './live-text';

/** Requests a brain process makes of its host, by operation. */
export interface BrainRequests {
  readEvents: { args: { slice: EventSlice }; result: LoggedEvent[] };
  emit: { args: { events: EventInput[]; key: string }; result: LoggedEvent[] };
  execute: { args: { name: string; input: Record<string, unknown>; hand?: string; toolUseId?: string }; result: ToolOutcome };
  hands: { args: Record<string, never>; result: HandInfo[] };
  agent: { args: Record<string, never>; result: Record<string, unknown> | undefined };
}
export type BrainOp = keyof BrainRequests;

/** Brain → host messages. */
export type BrainToHost =
  | { t: 'req'; id: number; op: BrainOp; args: unknown }
  | { t: 'cancel'; id: number }
  | { t: 'delta'; delta: LiveDelta };

/** Host → brain messages. */
export type HostToBrain =
  | { t: 'res'; id: number; ok: true; value: unknown }
  | { t: 'res'; id: number; ok: false; error: string }
  | { t: 'interrupt' }
  /** New input arrived: run the harness again (a lingering brain reuses its warm process). */
  | { t: 'wake' };
