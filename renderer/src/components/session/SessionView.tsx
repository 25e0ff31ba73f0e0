import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { useStore } from 'zustand';
import type { CorralApi, SessionSummary, UiEvent } from '../../../../main/api/ui/contract';
import { RowModel } from '../../lib/rows';
import { forgetSessionEvents, type SessionEvents } from '../../state/events';
import { readUrl, writeUrl } from '../../state/url';
import { useSessions } from '../../state/sessions';
import { useSessionEvents } from '../../state/use-session-events';
import { inspect, resetView, useView } from '../../state/view';
import { ErrorNote } from '../ErrorNote';
import { Composer } from './Composer';
import { EventList } from './EventList';
import { FilterBar } from './FilterBar';
import { ForkDialog } from './ForkDialog';
import { KeysHelp } from './KeysHelp';
import { PendingCalls } from './PendingCalls';
import { SessionHeader } from './SessionHeader';
import { Scrubber } from './Scrubber';
import { SidePanel } from './SidePanel';
import { useSessionHotkeys } from './use-session-hotkeys';

/**
 * The selected session: header (status, hands, ancestry), the scrubber, the timeline with its
 * lanes, the side panel (state at the cursor, the inspected event, the slice) and the composer.
 * Opens at the position and slice the URL names, and keeps the URL naming them.
 */
export function SessionView({ api, sessionId, onSelect }: { api: CorralApi; sessionId: string; onSelect(id: string, at?: number): void }) {
  const [attempt, setAttempt] = useState(0);
  const events = useSessionEvents(api, sessionId, attempt);
  const session = useSessions((s) => s.sessions.find((x) => x.id === sessionId));
  const retry = useCallback(() => {
    forgetSessionEvents(sessionId);
    setAttempt((n) => n + 1);
  }, [sessionId]);

  useState(() => {
    const url = readUrl();
    resetView(url.at, url.slice);
  });
  useEffect(() => syncUrl(), []);

  return (
    <section className="session-view" aria-label="Session">
      {events ? <Loaded api={api} sessionId={sessionId} session={session} events={events} onRetry={retry} onSelect={onSelect} /> : <div className="event-list-wrap" />}
    </section>
  );
}

function Loaded({ api, sessionId, session, events: handle, onRetry, onSelect }: { api: CorralApi; sessionId: string; session: SessionSummary | undefined; events: SessionEvents; onRetry(): void; onSelect(id: string, at?: number): void }) {
  const events = useStore(handle.store, (s) => s.events);
  const live = useStore(handle.store, (s) => s.live);
  const error = useStore(handle.store, (s) => s.error);
  const filters = useView((s) => s.filters);
  const index = handle.index;
  const rows = useRef(new RowModel()).current;
  const version = useRef(0);
  if (rows.sync(events, index, filters)) version.current++;
  const [forkAt, setForkAt] = useState<number | null>(null);
  const forks = useForks(api, sessionId);
  const forkPoints = new Map<number, number>();
  for (const f of forks) if (f.fork_seq !== null) forkPoints.set(f.fork_seq, (forkPoints.get(f.fork_seq) ?? 0) + 1);

  const onPick = useCallback((seq: number, e: MouseEvent | KeyboardEvent) => {
    if (e.shiftKey) {
      const anchor = useView.getState().cursor ?? seq;
      useView.setState({ slice: { from: Math.min(anchor, seq), to: Math.max(anchor, seq) }, tab: 'slice' });
    } else inspect(seq);
  }, []);
  const interrupt = useCallback(() => api.sendEvent({ sessionId, event: { type: 'user.interrupt' } }), [api, sessionId]);
  const [help, setHelp] = useState(false);
  const showHelp = useCallback(() => setHelp(true), []);
  useSessionHotkeys(events, index, interrupt, session?.status, showHelp);

  return (
    <>
      <SessionHeader session={session} sessionId={sessionId} forks={forks} onSelect={onSelect} index={index} />
      <Scrubber events={events} index={index} />
      {error && <ErrorNote error={error} onRetry={onRetry} />}
      <div className="session-body">
        <div className="timeline-col">
          <FilterBar index={index} />
          {!error && events.length === 0 && live.length === 0 && <p className="empty">No events yet.</p>}
          <EventList events={events} live={live} index={index} rows={rows} rowsVersion={version.current} forkPoints={forkPoints} onPick={onPick} />
        </div>
        <SidePanel api={api} sessionId={sessionId} events={events} index={index} onFork={setForkAt} />
      </div>
      <PendingCalls api={api} sessionId={sessionId} events={events} onSent={(e: UiEvent) => handle.add([e])} />
      <Composer api={api} sessionId={sessionId} status={session?.status} onSent={(e: UiEvent) => handle.add([e])} onInterrupt={interrupt} />
      {help && <KeysHelp onClose={() => setHelp(false)} />}
      {forkAt !== null && (
        <ForkDialog
          api={api}
          session={session}
          sessionId={sessionId}
          atSeq={forkAt}
          onClose={() => setForkAt(null)}
          onForked={(child) => {
            setForkAt(null);
            writeUrl({ at: null, slice: null });
            onSelect(child.id);
          }}
        />
      )}
    </>
  );
}

/** The sessions forked from this one, asked again whenever the session list changes. */
function useForks(api: CorralApi, sessionId: string): SessionSummary[] {
  const [forks, setForks] = useState<SessionSummary[]>([]);
  const known = useSessions((s) => s.sessions.filter((x) => x.parent_id === sessionId).length);
  useEffect(() => {
    let live = true;
    api.listForks({ sessionId }).then(
      (f) => live && setForks(f),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [api, sessionId, known]);
  return forks;
}

/** Keeps `at` and `slice` in the URL (at most every 200 ms while scrubbing or playing). */
function syncUrl(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const unsub = useView.subscribe((s, prev) => {
    if (s.cursor === prev.cursor && s.slice === prev.slice) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      const { cursor, slice } = useView.getState();
      writeUrl({ at: cursor === null ? null : String(cursor), slice: slice ? `${slice.from}-${slice.to}` : null });
    }, 200);
  });
  return () => {
    clearTimeout(timer);
    unsub();
  };
}
