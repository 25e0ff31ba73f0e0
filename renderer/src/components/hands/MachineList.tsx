import { useState } from 'react';
import type { CorralApi, SessionSummary, UiEnvironment } from '../../../../main/api/ui/contract';
import { giveHand, MACHINE_TYPE } from '../../lib/hand-drops';

const MACHINE_KINDS = new Set(['ssh', 'docker', 'adb']);

const where = (e: UiEnvironment) => {
  const c = e.config as Record<string, unknown>;
  if (c.type === 'ssh') return `${c.user ? `${String(c.user)}@` : ''}${String(c.host)}:${String(c.port ?? 22)}`;
  if (c.type === 'docker') return String(c.image);
  return String(c.serial ?? '');
};

/** Attached machines (ssh, docker, adb environments): drag one onto a session, or use "Give to session…". */
export function MachineList({ api, environments, sessions }: { api: CorralApi; environments: readonly UiEnvironment[]; sessions: readonly SessionSummary[] }) {
  const machines = environments.filter((e) => MACHINE_KINDS.has(e.config.type) && !e.archived_at);
  return (
    <section className="machine-list" aria-label="Machines">
      <h3>Machines</h3>
      {machines.length === 0 && <p className="empty">None attached yet: drop a key and an ssh config on the window, or pick one below.</p>}
      <ul>
        {machines.map((m) => (
          <MachineRow key={m.id} api={api} machine={m} sessions={sessions} />
        ))}
      </ul>
    </section>
  );
}

function MachineRow({ api, machine, sessions }: { api: CorralApi; machine: UiEnvironment; sessions: readonly SessionSummary[] }) {
  const [to, setTo] = useState('');
  const holders = sessions.filter((s) => s.hands?.some((h) => h.kind === machine.config.type && isDescribed(h.description, machine)));
  return (
    <li
      className="machine"
      draggable
      data-testid={`machine-${machine.name}`}
      onDragStart={(e) => {
        e.dataTransfer.setData(MACHINE_TYPE, JSON.stringify({ id: machine.id, name: machine.name }));
        e.dataTransfer.effectAllowed = 'copy';
      }}
    >
      <span className={`kind kind-${machine.config.type}`}>{machine.config.type}</span> <strong>{machine.name}</strong> <span className="where">{where(machine)}</span>
      <span className="state">{holders.length ? `held by ${holders.length} session${holders.length === 1 ? '' : 's'}` : 'idle'}</span>
      <label className="give">
        <span className="sr-only">Give {machine.name} to session</span>
        <select value={to} onChange={(e) => setTo(e.target.value)} aria-label={`Give ${machine.name} to session`}>
          <option value="">Give to session…</option>
          {sessions.map((s) => (
            <option key={s.id} value={s.id}>
              {s.title ?? s.id}
            </option>
          ))}
        </select>
      </label>
      <button type="button" disabled={!to} onClick={() => void giveHand(api, machine.id, machine.name, to).then(() => setTo(''))}>
        Give
      </button>
    </li>
  );
}

/**
 * Whether a hand's description is this machine's, as the host's kinds word it (`ssh user@host:port`,
 * `docker image`, `adb serial (model)`): the session list carries hands by name and description only.
 */
function isDescribed(description: string, e: UiEnvironment): boolean {
  const c = e.config as Record<string, unknown>;
  if (c.type === 'ssh') return description === `ssh ${String(c.user ?? '')}@${String(c.host)}:${String(c.port ?? 22)}`;
  if (c.type === 'docker') return description === `docker ${String(c.image)}`;
  return description === `adb ${String(c.serial)}` || description.startsWith(`adb ${String(c.serial)} (`);
}
