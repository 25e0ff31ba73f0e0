import type { SessionLog } from '../session/store';
import type { LoggedEvent } from '../session/types';

/** The name of the hand a session gets from its own environment. */
export const MAIN_HAND = 'main';

/** Events that change which hands a session holds (written by the registry, read back from the log). */
export const HAND_MEMBERSHIP_EVENTS = ['hand.attached', 'hand.released', 'hand.handed_over', 'hand.received'] as const;

/** One hand a session holds: its name and the environment it comes from (null: this machine). */
export interface HandMember {
  name: string;
  environmentId: string | null;
}

/** A request about a session's hands that its rules refuse (an unknown hand, a taken name, …). */
export class HandRequestError extends Error {
  override readonly name = 'HandRequestError';
  constructor(
    readonly kind: 'not_found' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Which hands each session holds: its environment's hand (`main`) plus hands attached or
 * received since, minus those released or handed over. A session's set is rebuilt from its log
 * the first time it is asked about, then kept in memory and updated as the registry writes each
 * membership event, so a tool call never rereads the log to find its hand.
 */
export class HandMembership {
  private readonly bySession = new Map<string, Map<string, HandMember>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly log: SessionLog) {
    const offSessions = log.subscribeSessions((change) => {
      if (change.kind === 'deleted') this.bySession.delete(change.sessionId);
    });
    // Applied as the log commits each membership event (the registry applies it again after
    // writing; applying is idempotent): a session list told of the change then sees it.
    const offEvents = log.subscribeAll(({ sessionId, event }) => {
      if ((HAND_MEMBERSHIP_EVENTS as readonly string[]).includes(event.type)) this.apply(sessionId, event as never);
    });
    this.unsubscribe = () => (offSessions(), offEvents());
  }

  /** The session's hands, `main` first; throws SessionNotFoundError for an unknown session. */
  of(sessionId: string): HandMember[] {
    return [...this.members(sessionId).values()];
  }

  /** The hand of that name, if the session holds one. */
  find(sessionId: string, name: string): HandMember | undefined {
    return this.members(sessionId).get(name);
  }

  /** Applies a membership event the registry has just written to the session's log. */
  apply(sessionId: string, event: Pick<LoggedEvent, 'type'> & Record<string, unknown>): void {
    const members = this.bySession.get(sessionId);
    if (members) applyTo(members, event);
  }

  close(): void {
    this.unsubscribe();
    this.bySession.clear();
  }

  private members(sessionId: string): Map<string, HandMember> {
    let members = this.bySession.get(sessionId);
    if (!members) {
      const session = this.log.getSession(sessionId);
      members = new Map([[MAIN_HAND, { name: MAIN_HAND, environmentId: session.environment_id }]]);
      for (let after = 0; ; ) {
        // Through the type index: costs the session's membership events, not its length.
        const page = this.log.getEventsOfTypes(sessionId, HAND_MEMBERSHIP_EVENTS, { after, limit: 1000 });
        for (const e of page) applyTo(members, e);
        if (page.length < 1000) break;
        after = page[page.length - 1]!.seq;
      }
      this.bySession.set(sessionId, members);
    }
    return members;
  }
}

function applyTo(members: Map<string, HandMember>, e: Pick<LoggedEvent, 'type'> & Record<string, unknown>): void {
  const name = String(e.hand);
  if (e.type === 'hand.attached' || e.type === 'hand.received') {
    members.set(name, { name, environmentId: typeof e.environment_id === 'string' ? e.environment_id : null });
  } else if (e.type === 'hand.released' || e.type === 'hand.handed_over') {
    members.delete(name);
  }
}
