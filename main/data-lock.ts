/**
 * One host per data folder. Two hosts on one folder (the desktop app and `serve`, say) would
 * each wake a brain for the same session and run its tool calls twice; the second host is
 * refused instead, with a message that says who holds the folder.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Thrown when another live process holds the data folder. */
export class DataDirInUseError extends Error {}

interface LockRecord {
  pid: number;
  what: string;
  started_at: string;
}

/** Folders this process holds (a second host in the same process is refused too). */
const heldHere = new Set<string>();

/** The lock file of a data folder. */
export const lockFileOf = (dataDir: string) => path.join(dataDir, 'corral.lock');

/**
 * Takes the data folder for this process (`what` says who, for the other's error message) and
 * returns its release. A lock left by a process that is gone (a crash, kill -9) is taken over.
 */
export function lockDataDir(dataDir: string, what: string): () => void {
  const file = lockFileOf(dataDir);
  const key = path.resolve(file);
  if (heldHere.has(key)) throw new DataDirInUseError(`The data folder ${dataDir} is already in use by this process.`);
  fs.mkdirSync(dataDir, { recursive: true });
  const record: LockRecord = { pid: process.pid, what, started_at: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(record), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const other = readLock(file);
    if (other && other.pid !== process.pid && isAlive(other.pid)) {
      throw new DataDirInUseError(
        `The data folder ${dataDir} is in use by ${other.what} (pid ${other.pid}, since ${other.started_at}). ` +
          `Quit it, or give this one another folder (--data DIR or CORRAL_DATA). If no Corral is running, delete ${file}.`,
      );
    }
    // Left by a process that is gone: take it over (one more try; a racing start loses there).
    fs.rmSync(file, { force: true });
  }
  heldHere.add(key);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldHere.delete(key);
    // Only our own lock is removed (a later host may hold the file by now).
    if (readLock(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
}

function readLock(file: string): LockRecord | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockRecord>;
    if (typeof parsed.pid !== 'number') return undefined;
    return { pid: parsed.pid, what: String(parsed.what ?? 'another Corral'), started_at: String(parsed.started_at ?? 'an unknown time') };
  } catch {
    return undefined; // unreadable or half-written: treated as stale
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours to signal.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
