import { create } from 'zustand';
import type { Discovery, DroppedSshHost, ProbeResult } from '../../../main/api/ui/contract';

/** The SSH host the attach form is filling in. */
export interface SshDraft {
  name: string;
  host: string;
  port: string;
  user: string;
  /** The vault credential of a dropped key (its contents never enter this store). */
  credentialId: string | null;
  keyLabel: string | null;
}

/** What the hands panel shows besides the log-fed session list: the form, the last test, messages. */
export interface HandsPanelState {
  draft: SshDraft | null;
  /** Hosts of the last dropped ssh config, to pick from. */
  configHosts: readonly DroppedSshHost[];
  probe: ProbeResult | null;
  /** A dropped key that asks for its passphrase: the File (read again on submit), never its text. */
  lockedKey: { file: File; message: string } | null;
  discovery: Discovery | null;
  notice: { kind: 'error' | 'ok'; text: string } | null;
  busy: boolean;
}

export const emptyDraft = (): SshDraft => ({ name: '', host: '', port: '22', user: '', credentialId: null, keyLabel: null });

export const useHandsPanel = create<HandsPanelState>(() => ({
  draft: null,
  configHosts: [],
  probe: null,
  lockedKey: null,
  discovery: null,
  notice: null,
  busy: false,
}));

export const say = (kind: 'error' | 'ok', text: string) => useHandsPanel.setState({ notice: { kind, text } });
/** What the last connection test was for: changing any of it makes that test stale. */
const TESTED: readonly (keyof SshDraft)[] = ['host', 'port', 'user', 'credentialId'];
export const patchDraft = (patch: Partial<SshDraft>) =>
  useHandsPanel.setState((s) => {
    const draft = { ...(s.draft ?? emptyDraft()), ...patch };
    const stale = TESTED.some((k) => k in patch && patch[k] !== s.draft?.[k]);
    return { draft, probe: stale ? null : s.probe };
  });
