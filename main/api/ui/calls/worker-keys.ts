import type { Host } from '../../../host';
import type { HostCalls } from '../service';
import { missing, refuse } from './errors';

/**
 * Environment keys for machines that dial in, made in the window as through
 * `POST /v1/environments/{id}/keys`. The key is in the reply once and never again: the host
 * keeps only its digest.
 */
export function workerKeyCalls(host: Pick<Host, 'environments' | 'dialIn'>): Pick<HostCalls, 'createWorkerKey'> {
  return {
    createWorkerKey: async ({ environmentId, name }) => {
      const env = host.environments.get(environmentId);
      if (!env) throw missing('environment', environmentId);
      if (env.archived_at) throw refuse(`environment '${environmentId}' is archived`);
      const type = (env.record.config as { type?: string } | undefined)?.type;
      if (type !== 'self_hosted') throw refuse(`environment '${environmentId}' is '${type}': worker keys are for self_hosted environments`);
      const k = await host.dialIn.createKey(environmentId, name ?? null);
      return { id: k.id, environment_id: k.environment_id, name: k.name, created_at: k.created_at, key: k.key };
    },
  };
}
