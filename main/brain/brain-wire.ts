import net from 'node:net';
import { lineSplitter, toLine } from './json-lines';

/**
 * The brain's end of its wire to the host: Node's IPC channel when the host forked it, or the
 * socket on fd 3 when the host's launcher started it (brain-launcher.ts; `CORRAL_BRAIN_WIRE=fd3`).
 */
export interface BrainWire {
  /** `done` is called once written, or once the write failed (the host is gone). */
  send(message: unknown, done?: () => void): void;
  on(listener: (message: unknown) => void): void;
  off(listener: (message: unknown) => void): void;
  readonly connected: boolean;
  /** Called once when the host's end closes. */
  onClose(listener: () => void): void;
}

/** The fd the launcher gives a brain its socket on. */
export const BRAIN_WIRE_FD = 3;

/** This process's wire, or undefined when it was started with neither. */
export function openBrainWire(): BrainWire | undefined {
  // An IPC channel wins: a brain forked by the host may have inherited the variable from it.
  if (!process.send) {
    if (process.env.CORRAL_BRAIN_WIRE === 'fd3') return socketWire(new net.Socket({ fd: BRAIN_WIRE_FD, readable: true, writable: true }));
    return undefined;
  }
  return {
    send: (m, done = () => {}) => void process.send!(m, undefined, undefined, done),
    on: (l) => void process.on('message', l),
    off: (l) => void process.off('message', l),
    get connected() {
      return process.connected === true;
    },
    onClose: (l) => void process.once('disconnect', l),
  };
}

function socketWire(socket: net.Socket): BrainWire {
  const listeners = new Set<(m: unknown) => void>();
  const closers: (() => void)[] = [];
  let open = true;
  const closed = () => {
    if (!open) return;
    open = false;
    for (const l of closers.splice(0)) l();
  };
  socket.setEncoding('utf8');
  socket.on(
    'data',
    lineSplitter(
      (m) => {
        for (const l of [...listeners]) l(m);
      },
      // The host writes only JSON lines: anything else means the wire is broken.
      () => socket.destroy(),
    ),
  );
  socket.on('end', () => socket.destroy()).on('close', closed).on('error', () => {});
  return {
    send: (m, done = () => {}) => {
      if (!open || socket.destroyed) return void setImmediate(done);
      socket.write(toLine(m), () => done());
    },
    on: (l) => void listeners.add(l),
    off: (l) => void listeners.delete(l),
    get connected() {
      return open;
    },
    onClose: (l) => void (open ? closers.push(l) : setImmediate(l)),
  };
}
