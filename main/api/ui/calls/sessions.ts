import type { Host } from '../../../host';
import { newOutcomeId } from '../../http/ids';
import { toLoggedInput } from '../../http/schemas/events';
import { checkAnswers } from '../../http/confirmations';
import { createSessionFromBody } from '../../http/shapes/session-create';
import type { SessionSummary, UiHand } from '../contract';
import { summarise, type HostCalls } from '../service';
import { refuse } from './errors';

/** The hands a session holds now (name, kind, what it is); none for an unknown session. */
export function handsOf(host: Pick<Host, 'hands'>, sessionId: string): UiHand[] {
  try {
    return host.hands.list(sessionId).map((h) => ({ name: h.name, kind: h.kind, description: h.description }));
  } catch {
    return [];
  }
}

/** Starting work and steering it: new sessions (with extra hands), any client event, hands and forks. */
export function sessionCalls(host: Pick<Host, 'log' | 'agents' | 'environments' | 'hands' | 'vault'>): Pick<HostCalls, 'createSession' | 'sendEvent' | 'listHands' | 'listForks'> {
  const { log } = host;
  const summary = (row: Parameters<typeof summarise>[0]): SessionSummary => summarise(row, (id) => handsOf(host, id), log);
  return {
    createSession: ({ session, hands }) => {
      // Every hand's environment is checked before anything is written.
      for (const h of hands ?? []) {
        const env = host.environments.get(h.environment_id);
        if (!env) throw refuse(`environment '${h.environment_id}' (hand '${h.name}') was not found`);
        if (env.archived_at) throw refuse(`environment '${h.environment_id}' (hand '${h.name}') is archived`);
        if (h.name === 'main') throw refuse("'main' is the session's own environment's hand; name the others differently");
      }
      if (new Set((hands ?? []).map((h) => h.name)).size !== (hands ?? []).length) throw refuse('two hands have the same name');
      const row = createSessionFromBody(host, session);
      for (const h of hands ?? []) host.hands.attach(row.id, h.environment_id, h.name);
      return summary(log.getSession(row.id));
    },
    sendEvent: ({ sessionId, event }) => {
      const session = log.getSession(sessionId);
      if (session.archived_at) throw refuse(`session '${sessionId}' is archived; it takes no new events`);
      // Results of calls are the hands' (or a self-hosted worker's, through the HTTP API and its lease).
      if (event.type === 'user.tool_result') throw refuse('user.tool_result is posted by self-hosted workers through the HTTP API, not from the window');
      checkAnswers(log, sessionId, [event]);
      return log.emitEvent(sessionId, toLoggedInput(event, newOutcomeId));
    },
    listHands: ({ sessionId }) => {
      log.getSession(sessionId);
      return handsOf(host, sessionId);
    },
    listForks: ({ sessionId }) => log.listForks(sessionId).map(summary),
  };
}
