import type { BrainChild } from '../../main/brain/supervisor';
import type { HostToBrain } from '../../main/brain/ipc-protocol';

/** A brain "process" in this one: the test says what it sends and sees what the host sends it. */
export interface FakeBrain extends BrainChild {
  readonly sessionId: string;
  /** Everything the host sent it, a batch's messages one by one (as the brain handles them). */
  readonly received: HostToBrain[];
  /** The messages as the host sent them (a batch is one). */
  readonly raw: HostToBrain[];
  /** Sends a message to the host as a brain would (anything at all). */
  say(message: unknown): void;
  /** Ends the "process" with this exit code or signal. */
  exit(code: number | null, signal?: string | null): void;
  readonly killed: boolean;
}

/** A spawn function for the supervisor that makes fake brains, and the list of those it made. */
export function fakeBrains(): { spawn: (sessionId: string) => FakeBrain; made: FakeBrain[] } {
  const made: FakeBrain[] = [];
  const spawn = (sessionId: string): FakeBrain => {
    let onMessage: ((m: unknown) => void) | undefined;
    let onExit: ((code: number | null, signal: string | null) => void) | undefined;
    let gone = false;
    const brain: FakeBrain = {
      sessionId,
      received: [],
      raw: [],
      killed: false,
      pid: undefined,
      send: (m) => {
        if (gone) return;
        brain.raw.push(structuredClone(m));
        brain.received.push(...structuredClone(m.t === 'batch' ? m.messages : [m]));
      },
      onMessage: (l) => (onMessage = l),
      onExit: (l) => (onExit = l),
      kill: () => brain.exit(null, 'SIGKILL'),
      say: (m) => onMessage?.(m),
      exit: (code, signal = null) => {
        if (gone) return;
        gone = true;
        (brain as { killed: boolean }).killed = signal === 'SIGKILL';
        onExit?.(code, signal);
      },
    };
    made.push(brain);
    return brain;
  };
  return { spawn, made };
}

/** Replies the host sent, by request id. */
export const repliesOf = (b: FakeBrain) => new Map(b.received.flatMap((m) => (m.t === 'res' ? [[m.id, m] as const] : [])));
