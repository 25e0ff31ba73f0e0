import net from 'node:net';
import tls from 'node:tls';
import { watchIdle } from './idle-socket';

/** Idle connections kept per upstream at most. */
const MAX_IDLE_PER_UPSTREAM = 4;
/**
 * How long a connection is kept idle (ms). Short, as Node's own agents keep theirs: a server
 * closes an idle connection when it likes, and a request written as it closes it is lost (the
 * brain then hears a 502 and retries after a backoff of seconds).
 */
const DEFAULT_IDLE_MS = 4000;

interface Idle {
  socket: net.Socket;
  /** Undoes the idle watch (its listeners and timer). */
  unwatch(): void;
}

/**
 * Connections to the model API shared by every brain connection of the proxy. A brain's first
 * request used to open its own connection upstream (for the real API, a TCP and a TLS handshake
 * on the way of every new session's first token); now a connection left idle by a brain that
 * went away is taken by the next one, and one is opened ahead as a session's brain is given its
 * capability, while it builds its first request (ModelProxy.warmFor says when). A connection is handed on only between whole answers (the caller's
 * rule), and never kept after its server sends anything unasked or closes it.
 */
export class UpstreamPool {
  private readonly idle = new Map<string, Idle[]>();
  /** Upstreams that have answered a request whole since the host started. */
  private readonly answered = new Set<string>();

  constructor(private readonly idleMs = DEFAULT_IDLE_MS) {}

  /** An idle connection to `target` (the same origin and trusted certificates), or a new one. */
  take(target: URL, ca?: string[]): net.Socket {
    const list = this.idle.get(keyOf(target, ca));
    for (let kept = list?.shift(); kept; kept = list?.shift()) {
      kept.unwatch();
      if (!kept.socket.destroyed) return kept.socket.ref();
    }
    return dial(target, ca);
  }

  /** Takes back a connection with no answer under way and no request begun: kept for the next brain, or closed. */
  give(socket: net.Socket, target: URL, ca?: string[]): void {
    const key = keyOf(target, ca);
    const list = this.idle.get(key) ?? this.idle.set(key, []).get(key)!;
    if (socket.destroyed || list.length >= MAX_IDLE_PER_UPSTREAM) return void socket.destroy();
    const drop = () => {
      const at = list.indexOf(entry);
      if (at >= 0) list.splice(at, 1);
      entry.unwatch();
      socket.destroy();
    };
    const timer = setTimeout(drop, this.idleMs);
    timer.unref();
    const unwatch = watchIdle(socket, drop);
    const entry: Idle = {
      socket,
      unwatch: () => {
        clearTimeout(timer);
        unwatch();
      },
    };
    list.push(entry);
  }

  /** `target` answered a request whole: connections to it may be opened ahead from now on. */
  noteAnswered(target: URL, ca?: string[]): void {
    this.answered.add(keyOf(target, ca));
  }

  /**
   * Opens a connection to `target` ahead, unless one is idle there already, or it has not yet
   * answered a request: a host whose API cannot be reached (no network, a wrong address) does
   * not dial it, or wait on its name being looked up, for every session it starts.
   */
  warm(target: URL, ca?: string[]): void {
    const key = keyOf(target, ca);
    if (!this.answered.has(key) || (this.idle.get(key)?.length ?? 0) > 0) return;
    this.give(dial(target, ca), target, ca);
  }

  /** How many connections are idle for `target` (tests). */
  idleCount(target: URL, ca?: string[]): number {
    return this.idle.get(keyOf(target, ca))?.length ?? 0;
  }

  close(): void {
    for (const list of this.idle.values()) for (const kept of list.splice(0)) (kept.unwatch(), kept.socket.destroy());
  }
}

const keyOf = (target: URL, ca?: string[]) => (ca ? `${target.origin} ${ca.join('\n')}` : target.origin);

function dial(target: URL, ca?: string[]): net.Socket {
  const secure = target.protocol === 'https:';
  const port = Number(target.port) || (secure ? 443 : 80);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const up = secure ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], ...(ca ? { ca } : {}) }) : net.connect({ host, port });
  up.setNoDelay(true);
  return up;
}
