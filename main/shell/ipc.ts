import { randomUUID } from 'node:crypto';
import { ipcMain, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import type { UiError } from '../api/ui/contract';
import { toUiError, uiServiceFor } from '../api/ui/service';
import { UI_CALLS, UI_STREAMS, ipcChannel } from '../api/ui/methods';
import type { Host } from '../host';

/** What every invoke handler answers; the preload unwraps it. Errors carry no stack. */
export type IpcEnvelope<T> = { ok: true; value: T } | { ok: false; error: UiError };

/** Decides whether an IPC message comes from our own page in our own window's main frame. */
export type SenderCheck = (event: IpcMainEvent | IpcMainInvokeEvent) => boolean;

/** One webContents may hold this many live streams; more is a bug or an attack. */
const MAX_SUBSCRIPTIONS = 256;

const refused: IpcEnvelope<never> = { ok: false, error: { kind: 'invalid_input', message: 'IPC sender refused' } };

/**
 * Registers a handler for every UI call and stream. Each first checks the sender, then goes
 * through the host's UI service, which validates the input. Returns a function that unregisters
 * everything and stops every stream.
 */
export function registerIpc(host: Host, isTrusted: SenderCheck): () => void {
  const ui = uiServiceFor(host);
  /** Live streams per webContents id: subscription id → stop. */
  const subs = new Map<number, Map<string, () => void>>();

  const stopAll = (contentsId: number) => {
    const mine = subs.get(contentsId);
    if (!mine) return;
    subs.delete(contentsId);
    for (const stop of mine.values()) safeStop(stop);
  };

  /** webContents whose lifecycle we already follow. */
  const watched = new Set<number>();
  const subsOf = (contents: WebContents) => {
    const id = contents.id;
    if (!watched.has(id)) {
      watched.add(id);
      // A page that goes away (closed, crashed, reloaded, navigated) takes its streams with it.
      contents.once('destroyed', () => {
        watched.delete(id);
        stopAll(id);
      });
      contents.on('render-process-gone', () => stopAll(id));
      contents.on('did-start-navigation', (details) => {
        if (details.isMainFrame && !details.isSameDocument) stopAll(id);
      });
    }
    let mine = subs.get(id);
    if (!mine) {
      mine = new Map();
      subs.set(id, mine);
    }
    return mine;
  };

  for (const name of UI_CALLS) {
    ipcMain.handle(ipcChannel.call(name), async (event, input: unknown): Promise<IpcEnvelope<unknown>> => {
      if (!isTrusted(event)) return refuse(event, name);
      try {
        return { ok: true, value: await ui.call(name, input) };
      } catch (err) {
        return { ok: false, error: toUiError(err) };
      }
    });
  }

  for (const name of UI_STREAMS) {
    ipcMain.handle(ipcChannel.watch(name), (event, input: unknown): IpcEnvelope<string> => {
      if (!isTrusted(event)) return refuse(event, name);
      const contents = event.sender;
      const mine = subsOf(contents);
      if (mine.size >= MAX_SUBSCRIPTIONS) return { ok: false, error: { kind: 'invalid_input', message: 'too many open streams' } };
      const subId = randomUUID();
      try {
        // The backlog may be pushed before this returns; the preload holds items for a
        // subscription id it has not been told yet.
        const stop = ui.watch(name, input, (item) => {
          if (!contents.isDestroyed()) contents.send(ipcChannel.item, { subId, item });
        });
        mine.set(subId, stop);
        return { ok: true, value: subId };
      } catch (err) {
        return { ok: false, error: toUiError(err) };
      }
    });
  }

  const onUnwatch = (event: IpcMainEvent, subId: unknown) => {
    if (!isTrusted(event) || typeof subId !== 'string') return;
    const mine = subs.get(event.sender.id);
    const stop = mine?.get(subId);
    if (!stop) return;
    mine?.delete(subId);
    safeStop(stop);
  };
  ipcMain.on(ipcChannel.unwatch, onUnwatch);

  return () => {
    for (const name of UI_CALLS) ipcMain.removeHandler(ipcChannel.call(name));
    for (const name of UI_STREAMS) ipcMain.removeHandler(ipcChannel.watch(name));
    ipcMain.off(ipcChannel.unwatch, onUnwatch);
    for (const id of [...subs.keys()]) stopAll(id);
  };
}

function refuse(event: IpcMainInvokeEvent, name: string): IpcEnvelope<never> {
  console.warn(`corral: refused IPC ${name} from ${event.senderFrame?.url ?? 'a detached frame'}`);
  return refused;
}

function safeStop(stop: () => void): void {
  try {
    stop();
  } catch (err) {
    console.error('corral: stopping a stream failed:', err);
  }
}
