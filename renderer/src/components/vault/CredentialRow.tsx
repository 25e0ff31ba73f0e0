import { useState, type FormEvent } from 'react';
import type { CorralApi, UiCredential } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ago } from '../../lib/time';
import { ErrorNote } from '../ErrorNote';
import { scopeOf, VALUE_FIELD } from './kinds';

/** One credential: name, kind, scope, last use; rotate (a new value), archive, remove. Never its value. */
export function CredentialRow({ api, credential: c, onChanged }: { api: CorralApi; credential: UiCredential; onChanged(): void }) {
  const name = c.display_name ?? c.id;
  const [rotating, setRotating] = useState(false);
  const [value, setValue] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);
  const run = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      onChanged();
    } catch (err) {
      setError(toClientError(err));
    }
  };
  const rotate = (e: FormEvent) => {
    e.preventDefault();
    const secret = value;
    setValue('');
    setRotating(false);
    const field = VALUE_FIELD[c.auth.type];
    void run(() => api.updateCredential({ vaultId: c.vault_id, credentialId: c.id, update: { auth: { type: c.auth.type, [field!]: secret } as never } }));
  };
  return (
    <tr data-testid="credential-row" data-credential={c.id}>
      <th scope="row">{name}</th>
      <td>{c.auth.type}</td>
      <td>{scopeOf(c)}</td>
      <td>{c.last_used_at ? <time dateTime={c.last_used_at}>{ago(c.last_used_at)}</time> : 'never'}</td>
      <td>{c.archived_at ? 'archived' : c.updated_at !== c.created_at ? `changed ${ago(c.updated_at)}` : `added ${ago(c.created_at)}`}</td>
      <td className="row-actions">
        {rotating ? (
          <form aria-label={`Rotate ${name}`} onSubmit={rotate}>
            <label>
              New value for {name}
              <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required />
            </label>
            <button type="submit">Save new value</button>
            <button type="button" onClick={() => (setRotating(false), setValue(''))}>
              Cancel
            </button>
          </form>
        ) : (
          !c.archived_at && VALUE_FIELD[c.auth.type] && (
            <button type="button" aria-label={`Rotate ${name}`} onClick={() => setRotating(true)}>
              Rotate
            </button>
          )
        )}
        {!c.archived_at && (
          <button type="button" aria-label={`Archive ${name}`} onClick={() => void run(() => api.archiveCredential({ vaultId: c.vault_id, credentialId: c.id }))}>
            Archive
          </button>
        )}
        {confirming ? (
          <button type="button" className="danger" aria-label={`Confirm removal of ${name}`} onClick={() => void run(() => api.deleteCredential({ vaultId: c.vault_id, credentialId: c.id }))}>
            Confirm removal
          </button>
        ) : (
          <button type="button" aria-label={`Remove ${name}`} onClick={() => setConfirming(true)}>
            Remove
          </button>
        )}
        {error && <ErrorNote error={error} />}
      </td>
    </tr>
  );
}
