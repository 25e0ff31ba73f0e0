import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import type { Host } from '../../host';
import { hostHeaderValues } from './allowed-hosts';
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

/**
 * A server that holds its port but serves nothing yet (503), so that `serve` can fail on a port
 * in use before it creates or locks anything in the data folder.
 */
export interface BoundServer extends RunningServer {
  /** Starts answering with the host's routes. */
  serve(host: Host, opts: Omit<ApiAppOptions, 'allowedHosts'>): void;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Binds the address. Rejects with Node's listen error (`code` EADDRINUSE, EACCES,
 * EADDRNOTAVAIL, …) and then holds nothing.
 */
export async function bindServer(opts: { hostname?: string; port: number; allowedHosts?: readonly string[] }): Promise<BoundServer> {
  const hostname = opts.hostname ?? '127.0.0.1';
  if (!LOOPBACK.has(hostname) && !opts.allowedHosts?.length) {
    // Without the Host check any web page could reach the server through a rebound DNS name.
    throw new Error(`listening on ${hostname} needs the host names clients use (allowedHosts)`);
  }
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  let fetch: (req: Request, env: unknown) => Response | Promise<Response> = () => new Response('Corral is starting', { status: 503 });
  const server = createAdaptorServer({ fetch: (req, env) => fetch(req, env), hostname, websocket: { server: wss } });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => {
      wss.close();
      reject(err);
    });
    server.listen(opts.port, hostname, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  // Bound to loopback, only loopback names are accepted: a web page elsewhere cannot reach
  // the API through a DNS name that resolves to 127.0.0.1.
  // Beyond loopback, only the names given (serve --allowed-hosts).
  const allowedHosts = [
    ...(LOOPBACK.has(hostname) ? [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`] : []),
    ...hostHeaderValues(opts.allowedHosts ?? [], port),
  ];
  return {
    url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
    port,
    serve(host, appOpts) {
      const app = createApiApp(host, { ...appOpts, allowedHosts });
      fetch = (req, env) => app.fetch(req, env as never);
    },
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

/** Starts the HTTP API + UI server for a host. */
export async function startServer(host: Host, opts: ServerOptions): Promise<RunningServer> {
  const bound = await bindServer(opts);
  bound.serve(host, opts);
  return bound;
}
