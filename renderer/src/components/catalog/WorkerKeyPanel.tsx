import { useState } from 'react';
import type { CorralApi, UiEnvironment, UiWorkerKey } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';

/** Where a worker reaches this host: the page's own origin when it is served over HTTP (`serve`). */
function serverUrl(): string {
  return location.protocol === 'http:' || location.protocol === 'https:' ? location.origin : 'URL-of-corral-serve';
}

/**
 * Worker keys of a self_hosted environment: make one and see it this once, with the command that
 * turns a machine into this environment's hand. The key is dropped from the page when the panel
 * closes; the host keeps only its digest.
 */
export function WorkerKeyPanel({ api, environment }: { api: CorralApi; environment: UiEnvironment }) {
  const [made, setMade] = useState<UiWorkerKey | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const make = async () => {
    setError(null);
    try {
      setMade(await api.createWorkerKey({ environmentId: environment.id }));
    } catch (err) {
      setError(toClientError(err));
    }
  };
  return (
    <section className="catalog-form" aria-label={`Worker keys of ${environment.name}`}>
      <h3>Machines that dial in</h3>
      <p className="muted">
        A machine becomes this environment's hand by running the self-hosted worker (it only dials out: behind NAT, on a VPN, in CI). It needs a worker key.
      </p>
      <div className="form-actions">
        <button type="button" onClick={() => void make()}>
          Make a worker key
        </button>
      </div>
      {error && <ErrorNote error={error} />}
      {made && (
        <div role="status" aria-label="New worker key">
          <p>Shown this once; copy it now. Run on the machine:</p>
          <pre data-testid="worker-command">{`CORRAL_ENVIRONMENT_KEY=${made.key} npx corral-worker --url ${serverUrl()} --environment ${environment.id}`}</pre>
        </div>
      )}
    </section>
  );
}
