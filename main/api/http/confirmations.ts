import type { SessionLog } from '../../session/store';
import { ApiError } from './errors';

/** What the check needs of the log. */
type LogReader = Pick<SessionLog, 'findEvent' | 'getEvents'>;

/** Types of events that answer a tool call (a result, or the user's confirmation). */
const ANSWER_TYPES = ['user.tool_confirmation', 'agent.tool_result', 'user.tool_result', 'agent.mcp_tool_result'];
/** Most answers read while checking one confirmation (a call waits near the log's end). */
const MAX_ANSWERS_READ = 10_000;

/**
 * Refuses `user.tool_confirmation` events that answer nothing: an unknown event, a call that is
 * not held for the user (its policy allowed it), or one already confirmed, denied or answered,
 * and `deny_message` on an `allow`. Called before anything is appended, on the same tick as the
 * append (the log is synchronous), so two clients cannot both answer one call.
 */
export function checkConfirmations(log: LogReader, sessionId: string, events: readonly { type: string; [k: string]: unknown }[]): void {
  const seen = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (e.type !== 'user.tool_confirmation') continue;
    const id = String(e.tool_use_id);
    const at = `events.${i}.tool_use_id`;
    if (e.result === 'allow' && e.deny_message != null) {
      throw new ApiError('invalid_request_error', `events.${i}.deny_message: only allowed when result is 'deny'`);
    }
    if (seen.has(id)) throw new ApiError('invalid_request_error', `${at}: '${id}' is confirmed twice in this request`);
    seen.add(id);
    const use = log.findEvent(sessionId, id);
    if (!use || (use.type !== 'agent.tool_use' && use.type !== 'agent.mcp_tool_use')) {
      throw new ApiError('invalid_request_error', `${at}: '${id}' is not a tool call of session '${sessionId}'`);
    }
    if (use.evaluated_permission !== 'ask') {
      throw new ApiError('invalid_request_error', `${at}: tool call '${id}' is not waiting for confirmation (its permission was '${String(use.evaluated_permission ?? 'allow')}')`);
    }
    const answers = log.getEvents(sessionId, { after: use.seq, types: ANSWER_TYPES, limit: MAX_ANSWERS_READ });
    const answer = answers.find((a) => a.tool_use_id === id || a.mcp_tool_use_id === id);
    if (answer) {
      const how = answer.type === 'user.tool_confirmation' ? `already ${answer.result === 'allow' ? 'allowed' : 'denied'}` : 'already answered (it has a result)';
      throw new ApiError('invalid_request_error', `${at}: tool call '${id}' is ${how}`);
    }
  }
}

/**
 * Refuses `user.custom_tool_result` events that answer nothing: an id that is not an
 * `agent.custom_tool_use` of this session, a call that already has its result, or one answered
 * twice in the request. The model API refuses a `tool_result` with no `tool_use` before it, and
 * two results for one call, so such an event, once logged, would fail every later model request
 * of the session. Called on the same tick as the append, like {@link checkConfirmations}.
 */
export function checkCustomToolResults(log: LogReader, sessionId: string, events: readonly { type: string; [k: string]: unknown }[]): void {
  const seen = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (e.type !== 'user.custom_tool_result') continue;
    const id = String(e.custom_tool_use_id);
    const at = `events.${i}.custom_tool_use_id`;
    if (seen.has(id)) throw new ApiError('invalid_request_error', `${at}: '${id}' is answered twice in this request`);
    seen.add(id);
    const use = log.findEvent(sessionId, id);
    if (!use || use.type !== 'agent.custom_tool_use') {
      throw new ApiError('invalid_request_error', `${at}: '${id}' is not an agent.custom_tool_use of session '${sessionId}'`);
    }
    const answers = log.getEvents(sessionId, { after: use.seq, types: ['user.custom_tool_result'], limit: MAX_ANSWERS_READ });
    if (answers.some((a) => a.custom_tool_use_id === id)) {
      throw new ApiError('invalid_request_error', `${at}: custom tool call '${id}' is already answered (it has a result)`);
    }
  }
}

/**
 * The user's answers in a batch of events, checked before any is appended: confirmations and
 * custom tool results (the two kinds a client sends for a call of the session). Every door that
 * appends a client's events calls this one.
 */
export function checkAnswers(log: LogReader, sessionId: string, events: readonly { type: string; [k: string]: unknown }[]): void {
  checkConfirmations(log, sessionId, events);
  checkCustomToolResults(log, sessionId, events);
}
