import { useState, type FormEvent } from 'react';
import type { CorralApi, UiVault } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';
import { authOf, KINDS, type PanelKind } from './kinds';

/**
 * Adds a credential to a vault. The value goes to the host once, on submit, and the field is
 * cleared at once: no state of the window keeps it, and nothing the host sends back holds it.
 */
export function CredentialForm({ api, vaults, onAdded }: { api: CorralApi; vaults: UiVault[]; onAdded(): void }) {
  const [vaultId, setVaultId] = useState(vaults[0]?.id ?? '');
  const [kind, setKind] = useState<PanelKind>('static_bearer');
  const [name, setName] = useState('');
  const [scope, setScope] = useState('');
  const [value, setValue] = useState('');
  const [error, setError] = useState<ClientError | null>(null);
  const k = KINDS[kind];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const secret = value;
    setValue('');
    try {
      await api.createCredential({ vaultId: vaultId || vaults[0]!.id, credential: { display_name: name || null, auth: authOf(kind, scope, secret) as never } });
      setName('');
      setScope('');
      onAdded();
    } catch (err) {
      setError(toClientError(err));
    }
  };

  return (
    <form className="catalog-form" aria-label="Add credential" onSubmit={submit}>
      <h3>Add a credential</h3>
      <label>
        Vault
        <select value={vaultId} onChange={(e) => setVaultId(e.target.value)}>
          {vaults.map((v) => (
            <option key={v.id} value={v.id}>
              {v.display_name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Kind
        <select value={kind} onChange={(e) => setKind(e.target.value as PanelKind)}>
          {Object.entries(KINDS).map(([id, v]) => (
            <option key={id} value={id}>
              {v.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Credential name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
      </label>
      {k.scope && (
        <label>
          {k.scope.label}
          <input value={scope} onChange={(e) => setScope(e.target.value)} required={k.scope.required} />
        </label>
      )}
      <label>
        Secret value
        <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required />
      </label>
      <button type="submit" className="primary" disabled={vaults.length === 0}>
        Add credential
      </button>
      {error && <ErrorNote error={error} />}
    </form>
  );
}
