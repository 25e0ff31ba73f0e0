import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

/** Prefixed, sortable ids in the Managed Agents style: `sesn_01…`, `sevt_01…`. */
export const newId = {
  session: () => `sesn_${next()}`,
  event: () => `sevt_${next()}`,
  agent: () => `agent_${next()}`,
  environment: () => `env_${next()}`,
} as const;
