/**
 * adb's reverse port forwarding (`adb reverse`) for one adb hand: a port on the device's loopback
 * whose connections the device's adbd sends back through the transport to the adb server, which
 * connects them to a port on its own loopback. The host's git and egress proxies listen on this
 * machine's loopback only; this is how an Android device reaches them (as an SSH hand does through
 * remote forwarding, and a container through its network).
 *
 * Two things about the adb server shape what is sent:
 * - The server remembers each `reverse:forward:DEVICE;HOST` a client sends, keyed by DEVICE as
 *   written, and kills itself (LOG(FATAL) "disallowed connect") when a device opens a stream to a
 *   HOST address it has no record of (adb.cpp, transport.cpp IsReverseConfigured: a guard against
 *   a compromised adbd). With `tcp:0` (the device picks a free port) two forwards share the key
 *   `tcp:0` and only the last survives, so the first one's connections would crash the server.
 *   Each forward is therefore asked for with `tcp:0` and then bound again under the port the
 *   device chose, to the same target: the device's listener stays as it was, and the server now
 *   has a record of it under its own name.
 * - Reverse forwards live in the device's adbd, not in our connection: closing our client does
 *   not remove them. They are removed when the hand is closed, and die with the transport when the
 *   device goes away.
 */
import { AdbReverseNotSupportedError, type Adb } from '@yume-chan/adb';
import { formatAddress, type ServerAddress } from './config';
import { withTimeout } from './server';

/** One request to the device's reverse service may take this long. */
const REVERSE_TIMEOUT_MS = 10_000;
/** Removing the forwards at close waits at most this long (the device may already be gone). */
const REMOVE_TIMEOUT_MS = 3_000;

/** True when the adb server runs on this machine (its loopback is ours). */
export function isLocalServer(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}

/** The device's reverse forwards made for one hand, by the loopback port each leads to. */
export class AdbReverseForwards {
  private readonly byPort = new Map<number, Promise<{ host: string; port: number }>>();
  /** Device addresses (`tcp:N`) made, to remove at close. */
  private readonly made = new Set<string>();
  /** Why the device could not reach the host, for the hand's facts; undefined while all went well. */
  problem: string | undefined;
  private closed = false;

  constructor(
    private readonly adb: Adb,
    private readonly addr: ServerAddress,
    private readonly serial: string,
  ) {}

  /** How many forwards are up. */
  get count(): number {
    return this.made.size;
  }

  /**
   * The address on the device that leads to `port` on this machine's loopback: made once per port.
   * Rejects with a message that says why when the device or the server cannot do it.
   */
  reach(port: number): Promise<{ host: string; port: number }> {
    let made = this.byPort.get(port);
    if (!made) {
      made = this.make(port);
      this.byPort.set(port, made);
      // A failure is not kept: a later call (the next provisioning step) asks again.
      made.catch(() => this.byPort.get(port) === made && this.byPort.delete(port));
    }
    return made;
  }

  private async make(port: number): Promise<{ host: string; port: number }> {
    try {
      if (this.closed) throw new Error('the hand was closed');
      if (!isLocalServer(this.addr.host)) {
        throw new Error(
          `the adb server at ${formatAddress(this.addr)} runs on another machine: a reverse forward would lead to port ${port} there, not to this host`,
        );
      }
      const target = `tcp:${port}`;
      const chosen = await this.ask(this.adb.reverse.addExternal('tcp:0', target));
      const m = /^tcp:(\d+)$/.exec(chosen);
      if (!m || m[1] === '0') {
        // adbd before Android 8 does not say which port it chose.
        throw new Error(`device ${this.serial} did not say which port it chose for the reverse forward (adbd of Android 7 or older)`);
      }
      this.made.add(chosen);
      // Recorded by the server under its own name (see the header): same target, so nothing moves.
      await this.ask(this.adb.reverse.addExternal(chosen, target));
      if (this.closed) {
        await this.removeAll();
        throw new Error('the hand was closed');
      }
      return { host: '127.0.0.1', port: Number(m[1]) };
    } catch (err) {
      this.problem ??= this.explain(err);
      throw new Error(this.explain(err));
    }
  }

  private ask<T>(p: Promise<T>): Promise<T> {
    return withTimeout(p, REVERSE_TIMEOUT_MS, `device ${this.serial} did not answer a reverse forwarding request within ${REVERSE_TIMEOUT_MS / 1000} s`);
  }

  private explain(err: unknown): string {
    if (err instanceof AdbReverseNotSupportedError) {
      return `device ${this.serial} cannot do adb reverse forwarding over Wi-Fi (adbd of Android 8 and older); connect it by USB for the hand to reach the host's git and egress proxies`;
    }
    const msg = err instanceof Error ? err.message : String(err);
    if (msg.startsWith(`device ${this.serial}`) || msg.startsWith('the adb server') || msg === 'the hand was closed') return msg;
    return `device ${this.serial} refused adb reverse forwarding: ${msg}`;
  }

  /**
   * Removes every forward this hand made (never rejects; bounded in time). Then drops the server's
   * record of `tcp:0` too (the device answers that no such listener exists, which is expected):
   * it would otherwise keep allowing the device to connect to the last forward's host port.
   */
  async removeAll(): Promise<void> {
    this.closed = true;
    const gone = [...this.made];
    this.made.clear();
    if (gone.length === 0) return;
    const quiet = (p: Promise<unknown>) => withTimeout(p, REMOVE_TIMEOUT_MS, 'timeout').catch(() => {});
    // Together: a device that went away unnoticed costs one timeout, not one per forward.
    await Promise.all([...gone, 'tcp:0'].map((d) => quiet(this.adb.reverse.remove(d))));
  }
}
