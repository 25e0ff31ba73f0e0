/**
 * adb's reverse port forwarding (`adb reverse`) for one adb hand: a port on the device's loopback
 * whose connections the device's adbd sends back through the transport to the adb server, which
 * connects them to a port on its own loopback. The host's git and egress proxies listen on this
 * machine's loopback only; this is how an Android device reaches them (as an SSH hand does through
 * remote forwarding, and a container through its network).
 *
 * How the adb server shapes what is sent: it remembers each `reverse:forward:DEVICE;HOST` a client
 * sends, keyed by DEVICE as written, and kills itself (LOG(FATAL) "disallowed connect") when a
 * device opens a stream to a HOST address it has no record of (adb.cpp, transport.cpp
 * IsReverseConfigured: a guard against a compromised adbd). `tcp:0` (the device picks a port)
 * would be written down as `tcp:0` for every forward, so a second one — ours, or another
 * program's on the same device — replaces the first one's record and the server dies at the first
 * one's next connection (seen with Debian's adb 29). So the port is chosen here, at random, and
 * asked for with `norebind:` (the device refuses a port another forward holds, and the server
 * then keeps that forward's record as it is); a port already taken is tried again elsewhere.
 *
 * Reverse forwards live in the device's adbd, not in our connection: closing our client does not
 * remove them. They are removed when the hand is closed, and die with the transport when the
 * device goes away.
 */
import type { Adb } from '@yume-chan/adb';
import { formatAddress, type ServerAddress } from './config';
import { withTimeout } from './server';

/** One request to the device's reverse service may take this long. */
const REVERSE_TIMEOUT_MS = 10_000;
/** Removing the forwards at close waits at most this long (the device may already be gone). */
const REMOVE_TIMEOUT_MS = 3_000;
/** Device ports tried before giving up (each taken one is tried again elsewhere). */
const TRIES = 8;
/** Below Linux's (and Android's) ephemeral range, above the usual development servers' ports. */
const randomDevicePort = () => 20_000 + Math.floor(Math.random() * 12_000);

/** The device answered a reverse request with FAIL; the message is its own (after the hex4 length). */
export class ReverseRefused extends Error {}

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
    /** Where device ports come from (tests give one that collides first). */
    private readonly pickPort: () => number = randomDevicePort,
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
      let last = '';
      for (let i = 0; i < TRIES; i++) {
        const devicePort = this.pickPort();
        const name = `tcp:${devicePort}`;
        try {
          await this.ask(`reverse:forward:norebind:${name};tcp:${port}`);
        } catch (err) {
          // Taken (by an app, or by another forward): another port. Anything else is an answer.
          if (err instanceof ReverseRefused && /cannot (re)?bind/.test(err.message)) {
            last = err.message;
            continue;
          }
          throw err;
        }
        this.made.add(name);
        if (this.closed) {
          await this.removeAll();
          throw new Error('the hand was closed');
        }
        return { host: '127.0.0.1', port: devicePort };
      }
      throw new Error(`device ${this.serial} refused ${TRIES} ports for a reverse forward (the last: ${last})`);
    } catch (err) {
      this.problem ??= this.explain(err);
      throw new Error(this.explain(err));
    }
  }

  /** Sends one `reverse:` request and reads the whole answer; ReverseRefused with the device's words on FAIL. */
  private async ask(service: string, ms = REVERSE_TIMEOUT_MS): Promise<string> {
    const answer = await withTimeout(
      this.adb.createSocketAndWait(service),
      ms,
      `device ${this.serial} did not answer a reverse forwarding request within ${ms / 1000} s`,
    );
    if (answer.startsWith('OKAY')) return answer.slice(4);
    if (answer.startsWith('FAIL')) throw new ReverseRefused(answer.slice(8) || 'no reason given');
    throw new Error(`unexpected answer ${JSON.stringify(answer.slice(0, 80))}`);
  }

  private explain(err: unknown): string {
    // adbd of Android 8 and older over Wi-Fi says this to every reverse request (issuetracker 37066218).
    if (err instanceof ReverseRefused && err.message === 'more than one device/emulator') {
      return `device ${this.serial} cannot do adb reverse forwarding over Wi-Fi (adbd of Android 8 and older); connect it by USB for the hand to reach the host's git and egress proxies`;
    }
    const msg = err instanceof Error ? err.message : String(err);
    // The server's word when the device closed the stream instead of opening the service.
    if (msg === 'closed') return `device ${this.serial} refused adb reverse forwarding: it has no reverse service (it closed the request)`;
    if (msg.startsWith(`device ${this.serial}`) || msg.startsWith('the adb server') || msg === 'the hand was closed') return msg;
    return `device ${this.serial} refused adb reverse forwarding: ${msg}`;
  }

  /** Removes every forward this hand made (never rejects; bounded in time). */
  async removeAll(): Promise<void> {
    this.closed = true;
    const gone = [...this.made];
    this.made.clear();
    // Together: a device that went away unnoticed costs one timeout, not one per forward.
    await Promise.all(gone.map((d) => this.ask(`reverse:killforward:${d}`, REMOVE_TIMEOUT_MS).catch(() => {})));
  }
}
