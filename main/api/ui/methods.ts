/**
 * Names of the renderer-facing calls and streams. Dependency-free so the sandboxed preload can
 * bundle it; the schemas and types live in ./contract.
 */
export const UI_CALLS = ['listSessions', 'getSession', 'getEvents', 'sendMessage'] as const;
export const UI_STREAMS = ['watchSessions', 'watchEvents', 'watchLiveText'] as const;

export type UiCallName = (typeof UI_CALLS)[number];
export type UiStreamName = (typeof UI_STREAMS)[number];

/** IPC channel of a call, and the channels streams use (desktop app only). */
export const ipcChannel = {
  call: (name: UiCallName) => `corral:call:${name}`,
  watch: (name: UiStreamName) => `corral:watch:${name}`,
  unwatch: 'corral:unwatch',
  item: 'corral:item',
} as const;
