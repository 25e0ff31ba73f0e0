/**
 * What the hands panel does with dropped or picked files and with drags between sessions. The
 * host checks everything again; a key's text is read from the File only to send it, and is never
 * kept in any store.
 */
import type { CorralApi } from '../../../main/api/ui/contract';
import { toClientError } from '../api/errors';
import { emptyDraft, patchDraft, say, useHandsPanel } from '../state/hands-panel';
import { useSessions } from '../state/sessions';

/** A session as people know it: its title, else its id. */
const titleOf = (id: string) => useSessions.getState().sessions.find((s) => s.id === id)?.title ?? id;

/** Drag payloads between the panel's lists (custom types: nothing else in the window accepts them). */
export const MACHINE_TYPE = 'application/x-corral-machine';
export const HAND_TYPE = 'application/x-corral-hand';

const fail = (err: unknown) => say('error', toClientError(err).message);

/** Sends each file to the host, which tells a key from a config; the answer fills the form. */
export async function takeFiles(api: CorralApi, files: readonly File[], passphrase?: string): Promise<void> {
  for (const file of files) {
    let result;
    try {
      result = await api.readDroppedFile({ name: file.name, text: await file.text(), ...(passphrase ? { passphrase } : {}) });
    } catch (err) {
      fail(err);
      continue;
    }
    if (result.kind === 'needs_passphrase') {
      useHandsPanel.setState({ lockedKey: { file, message: result.message }, notice: { kind: 'error', text: `${result.message}: type it below` } });
      continue;
    }
    if (result.kind === 'ssh_key') {
      const c = result.credential;
      useHandsPanel.setState({ lockedKey: null });
      patchDraft({ credentialId: c.id, keyLabel: `${c.display_name ?? file.name} (${c.key_type} ${c.fingerprint})` });
      say('ok', `Key ${c.fingerprint} ${c.reused ? 'was already' : 'is now'} in the vault`);
      continue;
    }
    useHandsPanel.setState({ configHosts: result.hosts });
    const first = result.hosts.find((h) => !h.unsupported);
    if (first) pickHost(first);
    say('ok', `${file.name}: ${result.hosts.length} host${result.hosts.length === 1 ? '' : 's'} found`);
  }
}

/** Fills the form from a config host (what it lacks stays for the user to type). */
export function pickHost(h: { alias: string; host: string; user?: string; port?: number }): void {
  const d = useHandsPanel.getState().draft ?? emptyDraft();
  patchDraft({ name: h.alias, host: h.host, user: h.user ?? d.user, port: String(h.port ?? 22) });
}

/** Gives a session a hand of a machine (dropped onto it, or the "Give to session…" menu). */
export async function giveHand(api: CorralApi, environmentId: string, envName: string, sessionId: string): Promise<void> {
  const name = handNameOf(envName);
  try {
    await api.giveHand({ sessionId, environmentId, name });
    say('ok', `Gave '${name}' to ${titleOf(sessionId)}`);
  } catch (err) {
    fail(err);
  }
}

/** Hands a hand from one session to another (dragged, or the "Hand over to…" menu). */
export async function handOver(api: CorralApi, fromSessionId: string, name: string, toSessionId: string): Promise<void> {
  try {
    await api.handOverHand({ fromSessionId, name, toSessionId });
    say('ok', `Handed '${name}' from ${titleOf(fromSessionId)} to ${titleOf(toSessionId)}`);
  } catch (err) {
    fail(err);
  }
}

/** A hand name from an environment's name: lower case, letters, digits, _ and -. */
export function handNameOf(envName: string): string {
  const n = envName.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[^a-z]+/, '').slice(0, 32);
  return n || 'machine';
}
