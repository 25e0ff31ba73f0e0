/**
 * How a container on a bridge network reaches a port on this machine's loopback (the git and
 * egress proxies listen there only): a TCP forwarder in the host on the network's gateway address
 * (the host's side of the bridge), piping each connection to the loopback port. It lives as long
 * as the container's shell. Where the gateway is not an address of this machine (an engine in a
 * VM, rootless networking) listening fails and the container cannot reach the port.
 */
import net from 'node:net';

/** The forwarders of one container, by loopback port. */
export class GatewayForwards {
  private readonly servers = new Map<number, Promise<{ server: net.Server; port: number } | undefined>>();

  /** The address the container reaches `port` at through `gateway`, or undefined. */
  reach(gateway: string, port: number): Promise<{ host: string; port: number } | undefined> {
    let made = this.servers.get(port);
    if (!made) {
      made = listen(gateway, port);
      this.servers.set(port, made);
    }
    return made.then((m) => (m ? { host: gateway, port: m.port } : undefined));
  }

  close(): void {
    for (const made of this.servers.values()) void made.then((m) => m?.server.close());
    this.servers.clear();
  }
}

function listen(gateway: string, target: number): Promise<{ server: net.Server; port: number } | undefined> {
  // Half-open both ways: a client that shuts down its side after the request (busybox wget over
  // a proxy does) must still get the answer.
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    const up = net.connect({ port: target, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => up.destroy());
    up.on('error', () => socket.destroy());
    socket.pipe(up).pipe(socket);
  });
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(0, gateway, () => resolve({ server, port: (server.address() as net.AddressInfo).port }));
  });
}

/** The gateway of a container's first bridge-like network, from `docker inspect`. */
export function gatewayOf(info: { HostConfig?: { NetworkMode?: string }; NetworkSettings?: { Networks?: Record<string, { Gateway?: string }> } } | undefined): string | undefined {
  const mode = info?.HostConfig?.NetworkMode;
  if (!mode || mode === 'none' || mode === 'host' || mode.startsWith('container:')) return undefined;
  for (const n of Object.values(info?.NetworkSettings?.Networks ?? {})) if (n.Gateway && net.isIP(n.Gateway)) return n.Gateway;
  return undefined;
}
