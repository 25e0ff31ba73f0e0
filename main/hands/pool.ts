import path from 'node:path';
import { createLocalHand } from './local';
import type { Hand } from './types';

/**
 * The hands sessions hold. For now each session has one `local` hand: a work folder under the
 * data folder, made the first time the model calls a tool (never at session start).
 */
export class HandPool {
  private readonly hands = new Map<string, Hand>();

  constructor(private readonly dataDir: string) {}

  /** The session's hand, provisioned on first use. */
  forSession(sessionId: string): Hand {
    let hand = this.hands.get(sessionId);
    if (!hand) {
      hand = createLocalHand({ workDir: this.workDirOf(sessionId) });
      this.hands.set(sessionId, hand);
    }
    return hand;
  }

  workDirOf(sessionId: string): string {
    return path.join(this.dataDir, 'work', sessionId);
  }

  async disposeAll(): Promise<void> {
    const all = [...this.hands.values()];
    this.hands.clear();
    await Promise.allSettled(all.map((h) => h.dispose()));
  }
}
