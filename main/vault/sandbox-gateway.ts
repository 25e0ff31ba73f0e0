/**
 * The sandbox gateway: where sandboxed local hands reach the host's git and egress proxies
 * (see main/hands/local/sandbox-relays.ts for the sandbox's side). The sandbox runtime's proxy
 * sends each CONNECT for a gateway name (`<random>.vault.corral.invalid:80`) to this Unix
 * socket, in a private folder; the name says which session and which proxy, and the rest of the
 * connection is handed to that proxy already bound to the session. So nothing inside the
 * sandbox holds a capability: the name is worth something only to the one command whose allow
 * list the runtime registered it in.
 *
 * One server per process (the runtime's configuration is per process); each host registers its
 * names with the proxies that serve them and drops them when it closes or the session ends.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { GATEWAY_DOMAIN } from '../hands/local/sandbox-relays';
import { gatewaySocketPath } from '../hands/local/sandbox';

/** What serves a name: a proxy that takes the connection bound to the session. */
export interface GatewayTarget {
  sessionId: string;
  attach(socket: net.Socket): void;
}

const names = new Map<string, GatewayTarget>();
let server: Promise<void> | undefined;

const MAX_HEAD = 8 * 1024;

/** Starts the process's gateway server on the runtime's socket path, once. */
export function startGateway(): Promise<void> {
  server ??= new Promise<void>((resolve, reject) => {
    const file = gatewaySocketPath();
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // Not there.
    }
    const srv = net.createServer({ allowHalfOpen: true }, (socket) => accept(socket));
    srv.once('error', reject);
    srv.listen(file, () => {
      srv.off('error', reject);
      // Only this user (the runtime's proxy runs in this process) may connect; the folder is 0700 too.
      fs.chmod(file, 0o600, () => {});
      srv.unref();
      resolve();
    });
  });
  server.catch(() => (server = undefined));
  return server;
}

/** A new random name for a session's proxy; `drop` forgets it. */
export function gatewayName(target: GatewayTarget): { host: string; drop(): void } {
  const host = `${crypto.randomBytes(16).toString('hex')}.${GATEWAY_DOMAIN}`;
  names.set(host, target);
  return { host, drop: () => void names.delete(host) };
}

/** Forgets every name of a session (its capabilities were revoked). */
export function dropGatewayNames(sessionId: string): void {
  for (const [host, t] of names) if (t.sessionId === sessionId) names.delete(host);
}

/** Reads the runtime's CONNECT line, answers it and hands the tunnel to the named proxy. */
function accept(socket: net.Socket): void {
  socket.on('error', () => socket.destroy());
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD) socket.destroy();
      return;
    }
    socket.off('data', onData);
    socket.pause();
    const rest = head.subarray(end + 4);
    const m = /^CONNECT ([a-z0-9.-]+):80 HTTP\/1\.[01]\r\n/i.exec(head.subarray(0, end + 2).toString('latin1'));
    const target = m ? names.get(m[1]!.toLowerCase()) : undefined;
    if (!target) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (rest.length) socket.unshift(rest);
    target.attach(socket);
    socket.resume();
  };
  socket.on('data', onData);
}
