/**
 * Remote port forwarding over an existing SSH connection (`ssh -R`): a port on the remote
 * host's loopback whose connections come back through the connection to a port on this
 * machine's loopback. The host's git proxy is reached this way from SSH hands.
 */
import net from 'node:net';
import type { Client } from 'ssh2';

/** Per connection: remote port → local port. */
const routes = new WeakMap<Client, Map<number, number>>();

/** Forwards a fresh port on the remote loopback to `localPort` here; resolves with the remote port. */
export function reverseForward(client: Client, localPort: number): Promise<{ host: string; port: number }> {
  let map = routes.get(client);
  if (!map) {
    const m = (map = new Map());
    routes.set(client, m);
    client.on('tcp connection', (info, accept, reject) => {
      const target = m.get(info.destPort);
      if (target === undefined) return reject();
      const channel = accept();
      const sock = net.connect(target, '127.0.0.1');
      sock.on('error', () => channel.close());
      channel.on('error', () => sock.destroy());
      channel.on('close', () => sock.destroy());
      sock.on('close', () => channel.close());
      channel.pipe(sock).pipe(channel);
    });
  }
  const portMap = map;
  for (const [remote, local] of portMap) if (local === localPort) return Promise.resolve({ host: '127.0.0.1', port: remote });
  return new Promise((resolve, reject) => {
    client.forwardIn('127.0.0.1', 0, (err, port) => {
      if (err) return reject(new Error(`the SSH server refused remote port forwarding (AllowTcpForwarding?): ${err.message}`));
      portMap.set(port, localPort);
      resolve({ host: '127.0.0.1', port });
    });
  });
}
