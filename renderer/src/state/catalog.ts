import { create } from 'zustand';
import type { CorralApi, UiAgent, UiEnvironment } from '../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../api/errors';

/** Agents and environments, as the window lists them (reloaded after each change made here). */
export interface CatalogState {
  agents: readonly UiAgent[];
  environments: readonly UiEnvironment[];
  loaded: boolean;
  error: ClientError | null;
}

export const useCatalog = create<CatalogState>(() => ({ agents: [], environments: [], loaded: false, error: null }));

export async function loadCatalog(api: CorralApi): Promise<void> {
  try {
    const [agents, environments] = await Promise.all([api.listAgents({}), api.listEnvironments({})]);
    useCatalog.setState({ agents, environments, loaded: true, error: null });
  } catch (err) {
    useCatalog.setState({ error: toClientError(err), loaded: true });
  }
}
