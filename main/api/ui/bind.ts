import type { CorralApi, UiError } from './contract';
import { UI_CALLS, UI_STREAMS, type UiCallName, type UiStreamName } from './methods';

/** How a transport makes one call. */
export type CallFn = (name: UiCallName, input: unknown) => Promise<unknown>;
/** How a transport starts one stream; returns its stop. */
export type WatchFn = (name: UiStreamName, input: unknown, onItem: (item: unknown) => void, onError?: (error: UiError) => void) => () => void;

/**
 * The renderer's API object, one named method per call and stream of the contract, over any
 * transport (the preload's IPC, the browser's WebSocket). The method table is written here
 * once. Dependency-free at run time, so the sandboxed preload can bundle it.
 */
export function bindApi(call: CallFn, watch: WatchFn): CorralApi {
  const api: Record<string, unknown> = {};
  for (const name of UI_CALLS) api[name] = (input: unknown) => call(name, input);
  for (const name of UI_STREAMS) {
    api[name] = (input: unknown, onItem: (item: unknown) => void, onError?: (error: UiError) => void) => watch(name, input, onItem, onError);
  }
  return api as CorralApi;
}
