import { useState, type DragEvent } from 'react';
import type { CorralApi, SessionSummary, UiHand } from '../../../../main/api/ui/contract';
import { giveHand, HAND_TYPE, handOver, MACHINE_TYPE } from '../../lib/hand-drops';

/** Sessions as drop targets: drop a machine to give it, drop another session's hand to hand it over. */
export function SessionTargets({ api, sessions }: { api: CorralApi; sessions: readonly SessionSummary[] }) {
  return (
    <section className="session-targets" aria-label="Sessions and their hands">
      <h3>Sessions</h3>
      {sessions.length === 0 && <p className="empty">No sessions yet.</p>}
      <ul>
        {sessions.map((s) => (
          <SessionTarget key={s.id} api={api} session={s} sessions={sessions} />
        ))}
      </ul>
    </section>
  );
}

function SessionTarget({ api, session, sessions }: { api: CorralApi; session: SessionSummary; sessions: readonly SessionSummary[] }) {
  const [over, setOver] = useState(false);
  const accepts = (e: DragEvent) => e.dataTransfer.types.includes(MACHINE_TYPE) || e.dataTransfer.types.includes(HAND_TYPE);
  const onDrop = (e: DragEvent) => {
    setOver(false);
    if (!accepts(e)) return;
    e.preventDefault();
    const machine = e.dataTransfer.getData(MACHINE_TYPE);
    if (machine) {
      const m = JSON.parse(machine) as { id: string; name: string };
      void giveHand(api, m.id, m.name, session.id);
      return;
    }
    const hand = JSON.parse(e.dataTransfer.getData(HAND_TYPE)) as { sessionId: string; name: string };
    if (hand.sessionId !== session.id) void handOver(api, hand.sessionId, hand.name, session.id);
  };
  return (
    <li
      className={`session-target${over ? ' drop-over' : ''}`}
      data-testid={`target-${session.id}`}
      onDragOver={(e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <div className="session-title">
        <strong>{session.title ?? session.id}</strong> <span className={`status status-${session.status}`}>{session.status}</span>
      </div>
      <ul className="hand-chips">
        {(session.hands ?? []).map((h) => (
          <HandChip key={h.name} api={api} session={session} hand={h} sessions={sessions} />
        ))}
      </ul>
    </li>
  );
}

function HandChip({ api, session, hand, sessions }: { api: CorralApi; session: SessionSummary; hand: UiHand; sessions: readonly SessionSummary[] }) {
  const [to, setTo] = useState('');
  // The main hand is the session's own environment: it stays with it.
  const movable = hand.name !== 'main';
  return (
    <li
      className="hand-chip"
      draggable={movable}
      data-testid={`hand-${session.id}-${hand.name}`}
      title={hand.description}
      onDragStart={(e) => {
        e.dataTransfer.setData(HAND_TYPE, JSON.stringify({ sessionId: session.id, name: hand.name }));
        e.dataTransfer.effectAllowed = 'move';
      }}
    >
      <span className={`kind kind-${hand.kind}`}>{hand.kind}</span> <span className="hand-name">{hand.name}</span>
      {movable && (
        <>
          <select value={to} onChange={(e) => setTo(e.target.value)} aria-label={`Hand ${hand.name} of ${session.id} over to`}>
            <option value="">Hand over to…</option>
            {sessions
              .filter((s) => s.id !== session.id)
              .map((s) => (
                <option key={s.id} value={s.id}>
                  {s.title ?? s.id}
                </option>
              ))}
          </select>
          <button type="button" disabled={!to} onClick={() => void handOver(api, session.id, hand.name, to).then(() => setTo(''))}>
            Move
          </button>
        </>
      )}
    </li>
  );
}
