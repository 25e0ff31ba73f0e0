import { contextBridge, ipcRenderer } from 'electron';
import type { CorralApi, UiError, UiInput, UiStreamItems } from '../main/api/ui/contract';
import { bindApi, type WatchFn } from '../main/api/ui/bind';
import { ipcChannel, type UiCallName, type UiStreamName } from '../main/api/ui/methods';

/**
 * Exposes `window.corral`: one named method per UI call and stream, nothing generic. Imports
 * only the dependency-free method names (and types), so the sandboxed bundle carries no zod.
 */

type Envelope<T> = { ok: true; value: T } | { ok: false; error: UiError };

/**
 * An Error that crosses the context bridge keeps only its message, so the kind also leads the
 * message as `[kind] …`; the renderer reads it back from there.
 */
function toError(error: UiError): Error {
  return Object.assign(new Error(`[${error.kind}] ${error.message}`), { kind: error.kind });
}

function malformed(): UiError {
  return { kind: 'internal', message: 'malformed reply from the main process' };
}

async function call<T>(name: UiCallName, input: unknown): Promise<T> {
  const reply = (await ipcRenderer.invoke(ipcChannel.call(name), input)) as Envelope<T> | undefined;
  if (reply?.ok === true) return reply.value;
  throw toError(reply?.ok === false ? reply.error : malformed());
}

// ---- streams ------------------------------------------------------------------------------

/** Live subscriptions by the id main gave them. */
const live = new Map<string, (item: unknown) => void>();
/** Items for ids main has pushed to but whose watch reply has not arrived yet. */
const early = new Map<string, unknown[]>();
/** Watch requests still waiting for their reply; early items are kept only meanwhile. */
let pending = 0;

ipcRenderer.on(ipcChannel.item, (_event, message: { subId?: unknown; item?: unknown } | undefined) => {
  const subId = message?.subId;
  if (typeof subId !== 'string') return;
  const deliver = live.get(subId);
  if (deliver) return deliver(message?.item);
  if (pending === 0) return; // a stream we already stopped
  const queue = early.get(subId) ?? [];
  queue.push(message?.item);
  early.set(subId, queue);
});

function watch<N extends UiStreamName>(
  name: N,
  input: UiInput<N>,
  onItem: (item: UiStreamItems[N]) => void,
  onError?: (error: UiError) => void,
): () => void {
  let subId: string | undefined;
  let stopped = false;
  const fail = (error: UiError) => {
    if (!stopped) onError?.({ kind: error.kind, message: error.message });
  };
  pending++;
  ipcRenderer
    .invoke(ipcChannel.watch(name), input)
    .then(
      (reply: Envelope<string> | undefined) => {
        if (reply?.ok !== true || typeof reply.value !== 'string') return fail(reply?.ok === false ? reply.error : malformed());
        subId = reply.value;
        const backlog = early.get(subId) ?? [];
        early.delete(subId);
        if (stopped) return ipcRenderer.send(ipcChannel.unwatch, subId);
        const deliver = (item: unknown) => {
          if (!stopped) onItem(item as UiStreamItems[N]);
        };
        live.set(subId, deliver);
        backlog.forEach(deliver);
      },
      () => fail({ kind: 'internal', message: `could not start ${name}` }),
    )
    .finally(() => {
      if (--pending === 0) early.clear();
    });
  return () => {
    if (stopped) return;
    stopped = true;
    if (subId === undefined) return; // unwatched as soon as the reply names it
    live.delete(subId);
    ipcRenderer.send(ipcChannel.unwatch, subId);
  };
}

const api: CorralApi = bindApi(call, watch as WatchFn);

contextBridge.exposeInMainWorld('corral', api);
