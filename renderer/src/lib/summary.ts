import type { UiEvent } from '../../../main/api/ui/contract';
import { unsandboxedReason } from './hand-lanes';
import { duration, str, textOf, toolCall } from './tool-call';

const MAX = 300;

/** One line saying what an event holds, with an optional badge and tone for the row. */
export interface Summary {
  text: string;
  /** A short tag after the text (`exit 1`, `terminal`). */
  badge?: { text: string; tone: 'ok' | 'error' | 'neutral' };
  /** Muted words after the text (a duration, how many more lines). */
  note?: string;
  /** The row reads as a failure. */
  tone?: 'error';
}

type Describe = (e: UiEvent) => Summary;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const count = (n: number | undefined) => (n === undefined ? '?' : n.toLocaleString('en-US'));
const hand = (e: UiEvent) => `Hand ${str(e.hand) ?? '?'}`;
const session = (v: unknown) => str(v) ?? 'another session';

const DESCRIBERS: Record<string, Describe> = {
  'agent.tool_use': (e) => ({ text: toolCall(e.name, e.input), ...(e.server_block ? { note: 'run by the model provider' } : {}) }),
  'agent.custom_tool_use': (e) => ({ text: toolCall(e.name, e.input) }),
  'agent.mcp_tool_use': (e) => ({ text: `${str(e.mcp_server_name) ?? 'MCP'} · ${toolCall(e.name, e.input)}` }),
  'agent.tool_result': toolResult,
  'agent.mcp_tool_result': toolResult,
  'agent.thinking': (e) => ({ text: e.redacted === true ? '(redacted thinking)' : (str(e.thinking) ?? '') }),
  'hand.provisioning': (e) => ({ text: `${hand(e)}: provisioning${str(e.kind) ? ` (${str(e.kind)})` : ''}…` }),
  'hand.ready': (e) => ({
    text: [`${hand(e)} ready${num(e.duration_ms) === undefined ? '' : ` in ${duration(num(e.duration_ms)!)}`}`, str(e.kind), str(e.description)].filter(Boolean).join(' · '),
    note: firstSeenKey(e.host_key),
    // A local hand whose commands reach this machine unconfined says so in strong colour.
    ...(unsandboxedReason(e) !== null ? { badge: { text: `not sandboxed: ${unsandboxedReason(e)}`, tone: 'error' as const } } : {}),
  }),
  'hand.provisioning_progress': provisioningProgress,
  'hand.taken_from_pool': (e) => ({
    text: `${hand(e)}: a hand made ahead${num(e.provisioned_ms) === undefined ? '' : ` (in ${duration(num(e.provisioned_ms)!)})`} taken from the pool`,
    note: num(e.repositories_ready) ? `${num(e.repositories_ready)} repositor${num(e.repositories_ready) === 1 ? 'y' : 'ies'} already there` : undefined,
  }),
  'hand.resource_applied': (e) => ({
    text: `${hand(e)}: ${str(e.url) ?? 'repository'} ${e.pre_applied === true ? 'was already cloned' : 'cloned'} into ${str(e.path) ?? '?'}`,
    note: e.pre_applied === true ? 'made ahead, in the pool' : str(e.cloned_on) ? `on ${str(e.cloned_on)}` : undefined,
  }),
  'hand.resource_failed': (e) => ({ text: `${hand(e)}: could not clone ${str(e.url) ?? 'a repository'}: ${str(e.error) ?? 'no reason given'}`, tone: 'error' }),
  'hand.lost': (e) => ({ text: `${hand(e)} lost: ${str(e.reason) ?? 'no reason given'}`, tone: 'error' }),
  'hand.attached': (e) => ({ text: `${hand(e)} attached${str(e.environment_id) ? ` (environment ${str(e.environment_id)})` : ''}` }),
  'hand.released': (e) => ({ text: `${hand(e)} released` }),
  'hand.handed_over': (e) => ({
    text: `${hand(e)} handed over to ${session(e.to_session_id)}${str(e.to_hand) && e.to_hand !== e.hand ? ` as ${str(e.to_hand)}` : ''}`,
  }),
  'hand.received': (e) => ({
    text: `${hand(e)} received from ${session(e.from_session_id)}${str(e.from_hand) && e.from_hand !== e.hand ? ` (was ${str(e.from_hand)})` : ''}`,
  }),
  // The vault's ledger: which credential served what (never its value).
  'vault.credential_used': (e) => ({ text: `credential ${str(e.credential_id) ?? '?'} (${str(e.kind) ?? '?'}) used for ${str(e.purpose) ?? '?'}${str(e.target) ? `: ${str(e.target)}` : ''}` }),
  'session.error': sessionError,
  'session.status_rescheduled': (e) => ({
    text: `retry ${num(e.attempt) ?? '?'}${num(e.retry_in_ms) === undefined ? '' : ` in ${duration(num(e.retry_in_ms)!)}`}${str(e.error_type) ? ` after ${str(e.error_type)}` : ''}`,
  }),
  'span.model_request_start': (e) => ({
    text: num(e.context_seq) === undefined ? '' : `context up to #${num(e.context_seq)}`,
    note: [typeof e.dropped_through === 'number' ? `#1–${e.dropped_through} dropped` : '', typeof e.elided_count === 'number' && e.elided_count > 0 ? `${e.elided_count} elided` : '']
      .filter(Boolean)
      .join(', ') || undefined,
  }),
  'span.model_request_end': modelRequestEnd,
};

/** Provisioning steps: connecting, cloning with git's counts, unpacking onto the hand. */
function provisioningProgress(e: UiEvent): { text: string } {
  const counts = (c: unknown, what: string) => {
    const v = c as { done?: unknown; total?: unknown } | undefined;
    return typeof v?.done === 'number' && typeof v.total === 'number' ? `${count(v.done)}/${count(v.total)} ${what}` : undefined;
  };
  const phase = str(e.phase) ?? 'provisioning';
  const detail = [str(e.url), str(e.stage), counts(e.objects, 'objects'), counts(e.files, 'files'), num(e.percent) === undefined ? undefined : `${num(e.percent)}%`].filter(Boolean).join(' · ');
  return { text: `${hand(e)}: ${phase}${detail ? ` — ${detail}` : '…'}` };
}

/** A host key seen for the first time is worth a glance (it was trusted on first use). */
function firstSeenKey(v: unknown): string | undefined {
  const k = v as { first_seen?: unknown; fingerprint?: unknown } | undefined;
  if (k?.first_seen !== true) return undefined;
  const fingerprint = str(k.fingerprint);
  return `new host key${fingerprint ? ` ${fingerprint}` : ''} remembered`;
}

/** What an event holds, as one line plus decorations. */
export function summarise(event: UiEvent): Summary {
  const describe = DESCRIBERS[event.type] ?? fallback;
  const s = describe(event);
  return { ...s, text: oneLine(s.text) };
}

function toolResult(e: UiEvent): Summary {
  const details = (e.details ?? {}) as { exit_code?: unknown; duration_ms?: unknown };
  const exit = num(details.exit_code);
  const ms = num(details.duration_ms);
  const lines = textOf(e.content).replace(/\s+$/, '').split('\n');
  // The badge says it: drop the `[exit code N]` line a command's output ends with.
  if (exit !== undefined && lines[lines.length - 1] === `[exit code ${exit}]`) lines.pop();
  const start = lines.findIndex((l) => l.trim() !== '');
  const first = start < 0 ? '' : lines[start]!;
  const more = start < 0 ? 0 : lines.length - start - 1;
  const notes = [more > 0 ? `+${more} line${more === 1 ? '' : 's'}` : '', ms === undefined ? '' : duration(ms)].filter(Boolean);
  return {
    text: first || '(no output)',
    badge: exit === undefined ? undefined : { text: `exit ${exit}`, tone: exit === 0 ? 'ok' : 'error' },
    note: notes.length ? notes.join(' · ') : undefined,
    tone: e.is_error === true ? 'error' : undefined,
  };
}

function sessionError(e: UiEvent): Summary {
  const error = (e.error ?? {}) as { type?: unknown; message?: unknown; retry_status?: { type?: unknown } };
  const text = [str(error.type), str(error.message)].filter(Boolean).join(': ') || 'error';
  const retry = str(error.retry_status?.type);
  return { text, tone: 'error', badge: retry ? { text: retry, tone: 'error' } : undefined };
}

function modelRequestEnd(e: UiEvent): Summary {
  const usage = (e.model_usage ?? {}) as Record<string, unknown>;
  const tokens = `in ${count(num(usage.input_tokens))} · out ${count(num(usage.output_tokens))} · cache read ${count(num(usage.cache_read_input_tokens))}`;
  if (e.is_error === true) {
    const error = (e.error ?? {}) as { type?: unknown; message?: unknown };
    const why = [str(error.type), str(error.message)].filter(Boolean).join(': ');
    return { text: `failed${why ? `: ${why}` : ''}`, note: tokens, tone: 'error' };
  }
  return { text: tokens, note: str(e.stop_reason) && `stop: ${str(e.stop_reason)}` };
}

function fallback(e: UiEvent): Summary {
  const text = textOf(e.content);
  if (text) return { text, tone: e.is_error === true ? 'error' : undefined };
  if (typeof e.name === 'string' && 'input' in e) return { text: toolCall(e.name, e.input) };
  const error = e.error as { type?: unknown; message?: unknown } | undefined;
  if (error && typeof error === 'object') return { text: [str(error.type), str(error.message)].filter(Boolean).join(': '), tone: 'error' };
  const stop = e.stop_reason as { type?: unknown } | null | undefined;
  if (stop && typeof stop.type === 'string') return { text: stop.type };
  if (typeof e.title === 'string') return { text: e.title };
  return { text: '' };
}

function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX ? `${flat.slice(0, MAX - 1)}…` : flat;
}
