import { useState, type FormEvent } from 'react';
import type { CorralApi } from '../../../../main/api/ui/contract';
import { toClientError } from '../../api/errors';
import { loadCatalog } from '../../state/catalog';
import { patchDraft, say, useHandsPanel } from '../../state/hands-panel';
import { pickHost, takeFiles } from '../../lib/hand-drops';
import { HostKeyView } from './HostKeyView';

/**
 * The short form for an SSH host: only what the dropped files left out, then a connection test
 * whose host key the user accepts before the machine is attached.
 */
export function AttachForm({ api }: { api: CorralApi }) {
  const { draft, probe, lockedKey, configHosts, busy } = useHandsPanel();
  const [passphrase, setPassphrase] = useState('');
  if (!draft) return null;
  const target = { host: draft.host.trim(), port: Number(draft.port) || 22, user: draft.user.trim() };
  const run = async (what: () => Promise<void>) => {
    useHandsPanel.setState({ busy: true });
    try {
      await what();
    } catch (err) {
      say('error', toClientError(err).message);
    } finally {
      useHandsPanel.setState({ busy: false });
    }
  };
  const test = () => run(async () => useHandsPanel.setState({ probe: await api.testSshHost({ ...target, ...(draft.credentialId ? { credentialId: draft.credentialId } : {}) }) }));
  const accept = () =>
    run(async () => {
      await api.trustHostKey({ ...target, fingerprint: probe!.host_key.fingerprint });
      useHandsPanel.setState({ probe: await api.testSshHost({ ...target, ...(draft.credentialId ? { credentialId: draft.credentialId } : {}) }) });
      say('ok', `Host key ${probe!.host_key.fingerprint} accepted`);
    });
  const attach = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const env = await api.attachMachine({ name: draft.name.trim() || target.host, machine: { type: 'ssh', ...target, ...(draft.credentialId ? { credentialId: draft.credentialId } : {}) } });
      useHandsPanel.setState({ draft: null, probe: null, configHosts: [] });
      say('ok', `Attached ${env.name}`);
      await loadCatalog(api);
    });
  };
  const unlock = (e: FormEvent) => {
    e.preventDefault();
    if (lockedKey) void run(() => takeFiles(api, [lockedKey.file], passphrase)).then(() => setPassphrase(''));
  };
  const ready = probe?.host_key.status === 'known' && probe.auth.ok;
  return (
    <div className="attach-form" aria-label="Attach an SSH host">
      <h3>Attach an SSH host</h3>
      {configHosts.length > 1 && (
        <label>
          Host from the config
          <select value={draft.name} onChange={(e) => pickHost(configHosts.find((h) => h.alias === e.target.value)!)}>
            {configHosts.map((h) => (
              <option key={h.alias} value={h.alias} disabled={Boolean(h.unsupported)}>
                {h.alias}
                {h.unsupported ? ` (${h.unsupported})` : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      {lockedKey && (
        <form onSubmit={unlock} aria-label="Key passphrase">
          <label>
            Passphrase of {lockedKey.file.name}
            <input type="password" value={passphrase} onChange={(e) => setPassphrase(e.target.value)} required autoComplete="off" />
          </label>
          <button type="submit" disabled={busy}>
            Unlock key
          </button>
        </form>
      )}
      <form onSubmit={attach}>
        <label>
          Name
          <input value={draft.name} onChange={(e) => patchDraft({ name: e.target.value })} placeholder={target.host} />
        </label>
        <label>
          Host
          <input value={draft.host} onChange={(e) => patchDraft({ host: e.target.value })} required />
        </label>
        <label>
          Port
          <input value={draft.port} onChange={(e) => patchDraft({ port: e.target.value })} inputMode="numeric" required />
        </label>
        <label>
          User
          <input value={draft.user} onChange={(e) => patchDraft({ user: e.target.value })} required />
        </label>
        <p className="key-line">Key: {draft.keyLabel ?? 'none dropped (keys in ~/.ssh and ssh-agent are not used here)'}</p>
        <div className="actions">
          <button type="button" onClick={() => void test()} disabled={busy || !target.host || !target.user}>
            Test connection
          </button>
          <button type="submit" className="primary" disabled={busy || !ready}>
            Attach
          </button>
          <button type="button" className="link" onClick={() => useHandsPanel.setState({ draft: null, probe: null })}>
            Cancel
          </button>
        </div>
      </form>
      {probe && <HostKeyView probe={probe} busy={busy} onAccept={() => void accept()} />}
    </div>
  );
}
