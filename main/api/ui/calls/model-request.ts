import { agentConfigOf, READ_SESSION_TOOL } from '../../../brain/agent-config';
import { buildRequest } from '../../../brain/context';
import { builtinToolDefinitions } from '../../../brain/tool-definitions';
import type { Host } from '../../../host';
import type { SessionLog } from '../../../session/store';
import type { LoggedEvent } from '../../../session/types';
import type { ModelRequestView } from '../contract';
import { LogInputError } from '../../../session/types';

const PAGE = 5000;

/** The session's events 1..atSeq, read a page at a time. */
export function eventsThrough(log: SessionLog, sessionId: string, atSeq: number): LoggedEvent[] {
  const out: LoggedEvent[] = [];
  for (;;) {
    const page = log.getEvents(sessionId, { after: out[out.length - 1]?.seq ?? 0, to: atSeq, limit: PAGE });
    out.push(...page);
    if (page.length < PAGE) return out;
  }
}

/**
 * The Messages request the brain would build from the log up to `atSeq`: the real, pure
 * `buildRequest` with the session's agent snapshot and the tool definitions its brain uses.
 * The tools name the hands the session holds now (a hand's description is not in the log).
 */
export function modelRequestAt(host: Pick<Host, 'log' | 'hands'>, sessionId: string, atSeq: number): ModelRequestView {
  const session = host.log.getSession(sessionId);
  if (atSeq > session.last_seq) throw new LogInputError(`at_seq ${atSeq} is past the session's last event (#${session.last_seq})`);
  const cfg = agentConfigOf(session.record.agent as Record<string, unknown> | undefined);
  const hands = host.hands.list(sessionId);
  const tools = [...builtinToolDefinitions(cfg.builtinTools, hands), ...cfg.customTools, READ_SESSION_TOOL];
  const built = buildRequest(eventsThrough(host.log, sessionId, atSeq), {
    model: cfg.model,
    system: cfg.system,
    tools,
    maxTokens: cfg.maxTokens,
    contextWindowTokens: cfg.contextWindowTokens,
  });
  return {
    session_id: sessionId,
    at_seq: atSeq,
    context_seq: built.contextSeq,
    params: built.params as ModelRequestView['params'],
    elided_seqs: built.elidedSeqs,
    estimated_tokens: built.estimatedTokens,
    note: `Built by the brain's buildRequest from events 1–${atSeq} with the session's agent (${cfg.model}); tools as the session's hands are now: ${hands.map((h) => `${h.name} (${h.kind})`).join(', ') || 'none'}.`,
  };
}
