import type { ProbeResult } from '../../../../main/api/ui/contract';

/** The host key a test found: accept a new one; a changed one shows the old and new and is refused. */
export function HostKeyView({ probe, busy, onAccept }: { probe: ProbeResult; busy: boolean; onAccept(): void }) {
  const k = probe.host_key;
  return (
    <div className={`host-key host-key-${k.status}`} data-testid="host-key" data-status={k.status}>
      {k.status === 'changed' || k.status === 'revoked' ? (
        <div role="alert">
          <strong>Host key changed: refused.</strong>
          <p>
            On record: {k.recorded.map((r) => `${r.type} ${r.fingerprint} (${r.where})`).join(', ') || 'revoked'}
          </p>
          <p>
            Offered now: {k.type} <code data-testid="new-fingerprint">{k.fingerprint}</code>
          </p>
          <p>If the host was reinstalled, remove the old entry (ssh-keygen -R) and test again.</p>
        </div>
      ) : (
        <p>
          Host key: {k.type} <code data-testid="fingerprint">{k.fingerprint}</code> — {k.status === 'known' ? 'trusted' : 'not seen before'}
        </p>
      )}
      {k.status === 'new' && (
        <button type="button" className="primary" onClick={onAccept} disabled={busy}>
          Accept this fingerprint
        </button>
      )}
      <p className={probe.auth.ok ? 'auth-ok' : 'auth-failed'}>Login: {probe.auth.ok ? 'the host accepts the key' : probe.auth.message}</p>
    </div>
  );
}
