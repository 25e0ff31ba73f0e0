import type { CorralApi } from '../../../main/api/contract';
import { toClientError } from './errors';
import { createWsTransport, defaultSocketUrl } from './ws-client';

declare global {
  interface Window {
    /** The desktop app's API, exposed by the preload; absent in a browser. */
    readonly corral?: CorralApi;
  }
}

export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'unauthorised' | 'refused';

/** The API plus what the UI needs to know about the line it runs over. */
export interface Transport {
  kind: 'ipc' | 'ws';
  api: CorralApi;
  /** Calls `listener` on every (re)connection, after streams are running again. */
  onOpen(listener: () => void): () => void;
}

/** The desktop preload's API; its errors are turned back into ClientErrors. */
export function ipcTransport(bridge: CorralApi): Transport {
  const wrap =
    <I, O>(fn: (input: I) => Promise<O>) =>
    (input: I) =>
      fn(input).catch((err: unknown) => {
        throw toClientError(err);
      });
  const api: CorralApi = {
    listSessions: wrap(bridge.listSessions),
    getSession: wrap(bridge.getSession),
    getEvents: wrap(bridge.getEvents),
    sendMessage: wrap(bridge.sendMessage),
    watchSessions: (input, onItem, onError) => bridge.watchSessions(input, onItem, onError),
    watchEvents: (input, onItem, onError) => bridge.watchEvents(input, onItem, onError),
    watchLiveText: (input, onItem, onError) => bridge.watchLiveText(input, onItem, onError),
  };
  return {
    kind: 'ipc',
    api,
    onOpen(listener) {
      let live = true;
      queueMicrotask(() => live && listener());
      return () => {
        live = false;
      };
    },
  };
}

/** IPC in the desktop app, else the WebSocket on this page's origin. */
export function chooseTransport(onStatus: (status: ConnectionStatus) => void): Transport {
  if (window.corral) {
    onStatus('open');
    return ipcTransport(window.corral);
  }
  return createWsTransport({ url: defaultSocketUrl(), onStatus });
}
