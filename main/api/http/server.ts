import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import type { Host } from '../../host';
import { createApiApp, type ApiAppOptions } from './app';

/** Options of the headless server. */
export interface ServerOptions extends Omit<ApiAppOptions, 'allowedHosts'> {
  /** Address to listen on; default 127.0.0.1. */
  hostname?: string;
  /** Port; 0 picks a free one. */
  port: number;
}

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:8787 */
  url: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Starts the HTTP API + UI server for a host. */
export async function startServer(host: Host, opts: ServerOptions): Promise<RunningServer> {
  const hostname = opts.hostname ?? '127.0.0.1';
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  let allowedHosts: string[] = [];
  const app = createApiApp(host, {
    ...opts,
    get allowedHosts() {
      return allowedHosts;
    },
  });
  const server = serve({ fetch: app.fetch, hostname, port: opts.port, websocket: { server: wss } });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  // Bound to loopback, only loopback names are accepted: a web page elsewhere cannot reach
  // the API through a DNS name that resolves to 127.0.0.1.
  if (LOOPBACK.has(hostname)) allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  return {
    url,
    port,
    close: async () => {
      // Each UI socket's streams stop (its 'close' handlers run) before the caller closes the log.
      await Promise.all([...wss.clients].map((client) => new Promise((closed) => (client.once('close', closed), client.terminate()))));
      return new Promise<void>((resolve) => {
        wss.close();
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}
