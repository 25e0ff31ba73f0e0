import type { CorralApi } from '../../../main/api/ui/contract';
import { bindApi } from '../../../main/api/ui/bind';
import { toClientError } from './errors';
import type { ConnectionStatus, Transport } from './types';
import { createWsTransport, defaultSocketUrl } from './ws-client';

export type { ConnectionStatus, Transport } from './types';

declare global {
  interface Window {
    /** The desktop app's API, exposed by the preload; absent in a browser. */
    readonly corral?: CorralApi;
  }
}

/** The desktop preload's API; its errors are turned back into ClientErrors. */
export function ipcTransport(bridge: CorralApi): Transport {
  const methods = bridge as unknown as Record<string, (...args: unknown[]) => unknown>;
  const api = bindApi(
    (name, input) =>
      (methods[name]!(input) as Promise<unknown>).catch((err: unknown) => {
        throw toClientError(err);
      }),
    (name, input, onItem, onError) => methods[name]!(input, onItem, onError) as () => void,
  );
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
