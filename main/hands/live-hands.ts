import type { Hand } from './types';
import type { KindTool, RemoteShell } from './remote/types';
import { removeRemoteDir } from './remote/shell-hand';

/** A hand made (or being made) for a session. */
export interface Live {
  sessionId: string;
  name: string;
  ready: Promise<{ hand: Hand; shell?: RemoteShell; extra: readonly KindTool[]; endFirstCall?: () => void }>;
  /** A folder on the hand that is the session's own (made for it on a shared host): it goes when the session is deleted. */
  ownDir?: string;
}

/** The live hands, by session and hand name; one session uses a live hand at a time. */
export class LiveHands {
  private readonly map = new Map<string, Live>();

  get(sessionId: string, name: string): Live | undefined {
    return this.map.get(`${sessionId}\u0000${name}`);
  }

  /** Files a hand under its current session and name. */
  set(live: Live): void {
    this.map.set(`${live.sessionId}\u0000${live.name}`, live);
  }

  /** Takes a hand out; returns it if there was one. */
  delete(sessionId: string, name: string): Live | undefined {
    const live = this.get(sessionId, name);
    this.map.delete(`${sessionId}\u0000${name}`);
    return live;
  }

  /** Drops a hand if it is still filed under its current holder (a lost one, a failed provisioning). */
  forget(live: Live): void {
    if (this.get(live.sessionId, live.name) === live) this.map.delete(`${live.sessionId}\u0000${live.name}`);
  }

  /** Takes out every hand of a session. */
  takeSession(sessionId: string): Live[] {
    const out = [...this.map.values()].filter((l) => l.sessionId === sessionId);
    for (const l of out) this.map.delete(`${l.sessionId}\u0000${l.name}`);
    return out;
  }

  /** Takes out every hand. */
  takeAll(): Live[] {
    const all = [...this.map.values()];
    this.map.clear();
    return all;
  }
}

/**
 * Ends the hands of a deleted session: a folder on a shared host that was the session's own is
 * removed, then each hand is disposed (a container removed, a connection closed, a shell and its
 * jobs killed). Never rejects.
 */
export async function endHands(hands: Live[]): Promise<void> {
  await Promise.allSettled(
    hands.map(async (l) => {
      const got = await l.ready;
      // Bounded: a host that stopped answering does not hold up the rest (or the host's close).
      if (l.ownDir && got.shell && got.shell.lostReason === undefined) await removeRemoteDir(got.shell, l.ownDir);
      await got.hand.dispose();
    }),
  );
}
