import fs from 'node:fs';
import path from 'node:path';

/** How big a log file grows and how many old ones are kept. */
export interface RotationOptions {
  /** A file that would grow past this many bytes is rotated first; default 10 MiB. */
  maxBytes?: number;
  /** Rotated files kept (`corral.log.1` newest … `corral.log.N`); default 3. */
  keep?: number;
}

/**
 * An append-only log file rotated by size: `corral.log` → `corral.log.1` → … → `corral.log.N`,
 * the oldest dropped. Writes are synchronous (a line of a few hundred bytes into the page cache):
 * no worker thread, so it runs the same in packaged Electron, and a line logged just before a
 * crash is in the file. Nothing is created before the first line, and a failing disk never
 * throws into the caller: the line is dropped and the file reopened on the next write.
 */
export class RotatingFile {
  private fd: number | undefined;
  private size = 0;
  private warned = false;
  private readonly maxBytes: number;
  private readonly keep: number;

  constructor(
    readonly file: string,
    opts: RotationOptions = {},
  ) {
    this.maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
    this.keep = Math.max(1, opts.keep ?? 3);
  }

  /** Appends one line (pino calls this with each record, newline included). */
  write(line: string): boolean {
    try {
      const bytes = Buffer.byteLength(line);
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
      fs.writeSync(this.fd!, line);
      this.size += bytes;
    } catch (err) {
      this.closeQuietly();
      if (!this.warned) {
        this.warned = true;
        process.stderr.write(`corral: cannot write the log file ${this.file}: ${(err as Error).message}\n`);
      }
    }
    return true;
  }

  close(): void {
    this.closeQuietly();
  }

  private open(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    this.fd = fs.openSync(this.file, 'a', 0o600);
    this.size = fs.fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.closeQuietly();
    for (let i = this.keep - 1; i >= 1; i--) renameIfThere(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    renameIfThere(this.file, `${this.file}.1`);
    this.open();
  }

  private closeQuietly(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = undefined;
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
