import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { migrate } from './migrations';

/** How to open the store's database file. */
export interface OpenDatabaseOptions {
  /** Path of the SQLite file; its folder is created if missing. */
  file: string;
  /**
   * Path of a better-sqlite3 addon built for another ABI (the desktop app passes the one built
   * for Electron); the default is the one in node_modules, built for Node.
   */
  nativeBinding?: string;
  /** How long a writer waits for another process's write lock before failing. */
  busyTimeoutMs?: number;
}

/** Opens (and migrates) the database in WAL mode with commits that survive a process crash. */
export function openDatabase(opts: OpenDatabaseOptions): Database.Database {
  fs.mkdirSync(path.dirname(opts.file), { recursive: true, mode: 0o700 });
  const db = new Database(opts.file, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
  db.pragma('journal_mode = WAL');
  // Every transcript is in here: readable by its owner only, whatever the umask was. SQLite gives
  // the WAL and shared-memory files the database file's permissions.
  for (const f of [opts.file, `${opts.file}-wal`, `${opts.file}-shm`]) {
    try {
      fs.chmodSync(f, fs.statSync(f).mode & 0o700);
    } catch {
      // Not there (yet), or not ours to change (a read-only copy): nothing to do.
    }
  }
  // In WAL mode NORMAL keeps every committed transaction through a process crash (kill -9);
  // only a power loss can drop the last commits.
  db.pragma('synchronous = NORMAL');
  // Checkpoint every ~32 MB of WAL instead of 4 MB: each checkpoint costs an fsync inside
  // some append, so fewer, larger ones keep append latency steady (bench:log shows it);
  // the WAL file is trimmed back after a checkpoint.
  db.pragma('wal_autocheckpoint = 8192');
  db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}
