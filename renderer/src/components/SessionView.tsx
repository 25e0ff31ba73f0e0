import { useCallback, useState } from 'react';
import { useStore } from 'zustand';
import type { CorralApi, SessionSummary, UiEvent } from '../../../main/api/ui/contract';
import { forgetSessionEvents, type SessionEvents } from '../state/events';
import { useSessions } from '../state/sessions';
import { useSessionEvents } from '../state/use-session-events';
import { Composer } from './Composer';
import { ErrorNote } from './ErrorNote';
import { EventList } from './EventList';
import { Inspector } from './Inspector';

/** The selected session: its header, its live events, the inspector and the message box. */
export function SessionView({ api, sessionId }: { api: CorralApi; sessionId: string }) {
  const [attempt, setAttempt] = useState(0);
  const events = useSessionEvents(api, sessionId, attempt);
  const session = useSessions((s) => s.sessions.find((x) => x.id === sessionId));
  const retry = useCallback(() => {
    forgetSessionEvents(sessionId);
    setAttempt((n) => n + 1);
  }, [sessionId]);

  return (
    <section className="session-view" aria-label="Session">
      <SessionHeader sessionId={sessionId} session={session} />
      {events ? <Timeline events={events} onRetry={retry} /> : <div className="event-list-wrap" />}
      <Composer api={api} sessionId={sessionId} onSent={(e: UiEvent) => events?.add([e])} />
    </section>
  );
}

function SessionHeader({ sessionId, session }: { sessionId: string; session: SessionSummary | undefined }) {
  return (
    <header className="session-head" data-testid="session-head">
      <h2>{session?.title || sessionId}</h2>
      {session && (
        <span className="session-meta">
          <span className={`status status-${session.status}`}>{session.status}</span>
          <span className="muted">{session.agent_name ?? 'no agent'}</span>
          <span className="muted">{session.id}</span>
        </span>
      )}
    </header>
  );
}

function Timeline({ events, onRetry }: { events: SessionEvents; onRetry(): void }) {
  const list = useStore(events.store, (s) => s.events);
  const live = useStore(events.store, (s) => s.live);
  const error = useStore(events.store, (s) => s.error);
  const [selectedSeq, setSelectedSeq] = useState<number | null>(null);
  const selected = selectedSeq === null ? undefined : findBySeq(list, selectedSeq);
  return (
    <>
      {error && <ErrorNote error={error} onRetry={onRetry} />}
      {!error && list.length === 0 && live.length === 0 && <p className="empty">No events yet.</p>}
      <EventList events={list} live={live} selectedSeq={selectedSeq} onSelect={(seq) => setSelectedSeq(seq === selectedSeq ? null : seq)} />
      {selected && <Inspector event={selected} onClose={() => setSelectedSeq(null)} />}
    </>
  );
}

/** Binary search: the list is ascending by seq. */
function findBySeq(list: readonly UiEvent[], seq: number): UiEvent | undefined {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const e = list[mid]!;
    if (e.seq === seq) return e;
    if (e.seq < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
