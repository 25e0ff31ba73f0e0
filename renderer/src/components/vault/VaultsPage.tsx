import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { CorralApi, UiVault } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';
import { CredentialForm } from './CredentialForm';
import { CredentialRow } from './CredentialRow';

/**
 * The vault panel: vaults and their credentials (name, kind, scope, last use), a form to add
 * one, and per credential rotate, archive and remove. Values go to the host and never come back:
 * the host's answers carry none, and the window keeps none.
 */
export function VaultsPage({ api }: { api: CorralApi }) {
  const [vaults, setVaults] = useState<UiVault[] | null>(null);
  const [showArchived, setShowArchived] = useState(false);
  const [newName, setNewName] = useState('');
  const [error, setError] = useState<ClientError | null>(null);
  const load = useCallback(async () => {
    try {
      setVaults(await api.listVaults({ includeArchived: showArchived }));
      setError(null);
    } catch (err) {
      setError(toClientError(err));
    }
  }, [api, showArchived]);
  useEffect(() => void load(), [load]);

  const createVault = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await api.createVault({ display_name: newName.trim() });
      setNewName('');
      await load();
    } catch (err) {
      setError(toClientError(err));
    }
  };

  return (
    <section className="catalog-page vaults-page" aria-labelledby="vaults-title">
      <header className="page-head">
        <h2 id="vaults-title">Vaults</h2>
        <form className="inline-form" aria-label="New vault" onSubmit={createVault}>
          <label>
            Vault name
            <input value={newName} onChange={(e) => setNewName(e.target.value)} required maxLength={255} />
          </label>
          <button type="submit" className="primary">
            New vault
          </button>
        </form>
        <label className="check">
          <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} /> Show archived
        </label>
      </header>
      {error && <ErrorNote error={error} onRetry={() => void load()} />}
      <div className="catalog-body">
        <div className="vault-list">
          {vaults?.length === 0 && <p className="empty">No vaults yet: make one to hold credentials.</p>}
          {vaults?.map((v) => (
            <section key={v.id} aria-label={`Vault ${v.display_name}`} className="vault">
              <h3>
                {v.display_name} {v.is_default && <span className="muted">(default)</span>} {v.archived_at && <span className="muted">(archived)</span>}
              </h3>
              <table className="credential-table" aria-label={`Credentials in ${v.display_name}`}>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Scope</th>
                    <th scope="col">Last used</th>
                    <th scope="col">State</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {v.credentials.map((c) => (
                    <CredentialRow key={`${c.id}@${c.updated_at}`} api={api} credential={c} onChanged={() => void load()} />
                  ))}
                  {v.credentials.length === 0 && (
                    <tr>
                      <td colSpan={6} className="empty">
                        No credentials.
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
            </section>
          ))}
        </div>
        {vaults && vaults.some((v) => !v.archived_at) && <CredentialForm api={api} vaults={vaults.filter((v) => !v.archived_at)} onAdded={() => void load()} />}
      </div>
    </section>
  );
}
