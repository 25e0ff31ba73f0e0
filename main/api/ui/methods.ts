/**
 * Names of the renderer-facing calls and streams. Dependency-free so the sandboxed preload can
 * bundle it; the schemas and types live in ./contract.
 */
/** Calls the UI service answers from the session log alone. */
export const LOG_CALLS = ['listSessions', 'getSession', 'getEvents', 'sendMessage'] as const;
/** Calls that need the whole host (catalog, hands, brain, data folder): main/api/ui/calls/. */
export const HOST_CALLS = [
  'listAgents',
  'createAgent',
  'updateAgent',
  'archiveAgent',
  'listEnvironments',
  'createEnvironment',
  'updateEnvironment',
  'archiveEnvironment',
  'createSession',
  'sendEvent',
  'listHands',
  'listForks',
  'getModelRequest',
  'previewFork',
  'forkSession',
  'readFullOutput',
  'listVaults',
  'createVault',
  'createCredential',
  'updateCredential',
  'archiveCredential',
  'deleteCredential',
  'createWorkerKey',
  // The hands panel (machines-contract.ts).
  'discoverMachines',
  'readDroppedFile',
  'testSshHost',
  'trustHostKey',
  'attachMachine',
  'giveHand',
  'handOverHand',
] as const;
export const UI_CALLS = [...LOG_CALLS, ...HOST_CALLS] as const;
export const UI_STREAMS = ['watchSessions', 'watchEvents', 'watchLiveText', 'watchWorkers', 'watchHandPools'] as const;

export type LogCallName = (typeof LOG_CALLS)[number];
export type HostCallName = (typeof HOST_CALLS)[number];
export type UiCallName = (typeof UI_CALLS)[number];
export type UiStreamName = (typeof UI_STREAMS)[number];

/** IPC channel of a call, and the channels streams use (desktop app only). */
export const ipcChannel = {
  call: (name: UiCallName) => `corral:call:${name}`,
  watch: (name: UiStreamName) => `corral:watch:${name}`,
  unwatch: 'corral:unwatch',
  item: 'corral:item',
} as const;
