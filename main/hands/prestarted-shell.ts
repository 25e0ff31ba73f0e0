/**
 * A shell started ahead, for a pooled hand: starting one (a `docker exec`, an SSH channel) and
 * setting it up (its marker's round trip) costs tens of milliseconds, which a session taking a
 * warm hand would otherwise wait at its first `bash` call. The shell is started and set up in
 * the hand's work folder with the environment's variables when the hand is made; the session's
 * first `bash` call adopts it (ShellSession.adopt: its folder and variables, sent with the first
 * command, no round trip of their own). Later shells (a restart, one after it ended) start fresh.
 */
import { ShellSession, type StartShell } from './shell-session';

/** A shell started ahead: `take` gives it out once; `close` ends it if never taken. */
export interface PrestartedShell {
  /** The shell, if still there and not taken yet (undefined afterwards). */
  take(): ShellSession | undefined;
  close(): void;
}

/** Starts and sets up a shell now through `start`; undefined when it cannot (the hand still works, starting one later). */
export async function prestartShell(start: StartShell, init: { cwd: string; exports?: string }): Promise<PrestartedShell | undefined> {
  let session: ShellSession;
  try {
    session = await ShellSession.start(start, init);
  } catch {
    return undefined;
  }
  let given = false;
  return {
    take: () => {
      if (given || session.exitReason !== undefined) return undefined;
      given = true;
      return session;
    },
    close: () => {
      if (given) return;
      given = true;
      void session.kill();
    },
  };
}
