import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** A path the model gave that leads outside the work folder (or nowhere sensible). */
export class PathError extends Error {}

/**
 * Resolves `p` as the real path it leads to, following symlinks where they exist. For a path
 * whose tail does not exist yet, the deepest existing ancestor is resolved and the rest
 * appended; a dangling symlink is followed to where it points.
 */
export function realish(abs: string, depth = 0): string {
  if (depth > 40) throw new PathError(`Too many levels of symbolic links at ${abs}`);
  try {
    return fs.realpathSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(abs);
  } catch {
    st = undefined;
  }
  if (st?.isSymbolicLink()) {
    // A dangling link: writing through it would create its target, so check the target.
    const target = fs.readlinkSync(abs);
    return realish(path.resolve(path.dirname(abs), target), depth + 1);
  }
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(realish(parent, depth), path.basename(abs));
}

/** O_NOFOLLOW where the platform has it: the last component may not be a symbolic link. */
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/** The path an open file descriptor refers to (Linux), or undefined where that cannot be known. */
function openedPath(fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/** The work folder and how to resolve the paths a model sends against it. */
export class WorkDir {
  /** The folder as given (absolute). */
  readonly dir: string;
  /** The folder with symlinks resolved. */
  readonly real: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.real = fs.realpathSync(this.dir);
  }

  /**
   * The real absolute path for `p` (relative to the work folder, or absolute inside it).
   * Throws PathError when it leads outside the work folder, directly or through a symlink.
   */
  resolve(p: string): string {
    if (p.includes('\0')) throw new PathError('Paths may not contain NUL characters.');
    if (p.trim() === '') throw new PathError('The path is empty.');
    const lexical = path.resolve(this.dir, p);
    const real = realish(lexical);
    if (!inside(this.real, real)) {
      const via = inside(this.dir, lexical) || inside(this.real, lexical) ? ' (through a symbolic link)' : '';
      throw new PathError(
        `Path "${p}" is outside the work folder${via}; file tools only reach files inside ${this.dir}. Use a path relative to the work folder.`,
      );
    }
    return real;
  }

  /**
   * Reads a file that `resolve` found inside the work folder, checking what was actually
   * opened: a command running meanwhile may have swapped a folder on the way for a symbolic
   * link leading out (`ln -s ~/.ssh x` between the check and the open).
   */
  readFile(abs: string): Buffer {
    // Symbolic links are followed (one inside the folder is fine); what matters is where the file is.
    const fd = fs.openSync(abs, fs.constants.O_RDONLY);
    try {
      this.checkOpened(fd, abs);
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Writes a whole file at a path `resolve` found inside the work folder, with the same check as `readFile`. */
  writeFile(abs: string, data: string | Buffer): void {
    let fd: number;
    let created = true;
    try {
      fd = fs.openSync(abs, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW, 0o666);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      created = false;
      fd = fs.openSync(abs, fs.constants.O_WRONLY | NOFOLLOW);
    }
    try {
      try {
        this.checkOpened(fd, abs);
      } catch (err) {
        if (created) fs.rmSync(openedPath(fd) ?? abs, { force: true });
        throw err;
      }
      fs.ftruncateSync(fd, 0);
      fs.writeFileSync(fd, data);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** `readFile` without blocking the caller's thread on the read (the host's event loop). */
  async readFileAsync(abs: string): Promise<Buffer> {
    const file = await fsp.open(abs, fs.constants.O_RDONLY);
    try {
      this.checkOpened(file.fd, abs);
      return await file.readFile();
    } finally {
      await file.close();
    }
  }

  /** `writeFile` without blocking the caller's thread on the write. */
  async writeFileAsync(abs: string, data: string | Buffer): Promise<void> {
    let file: fsp.FileHandle;
    let created = true;
    try {
      file = await fsp.open(abs, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW, 0o666);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      created = false;
      file = await fsp.open(abs, fs.constants.O_WRONLY | NOFOLLOW);
    }
    try {
      try {
        this.checkOpened(file.fd, abs);
      } catch (err) {
        if (created) await fsp.rm(openedPath(file.fd) ?? abs, { force: true });
        throw err;
      }
      await file.truncate(0);
      await file.writeFile(data);
    } finally {
      await file.close();
    }
  }

  /** Throws PathError unless the open file `fd` is inside the work folder. */
  private checkOpened(fd: number, abs: string): void {
    const opened = openedPath(fd);
    if (opened !== undefined) {
      if (!inside(this.real, opened)) throw new PathError(`The file moved outside the work folder while it was being opened (through a symbolic link); file tools only reach files inside ${this.dir}.`);
      return;
    }
    // No /proc: the file opened must be the one its path leads to now, and that must be inside.
    const st = fs.fstatSync(fd);
    const now = realish(abs);
    const there = fs.statSync(now, { throwIfNoEntry: false });
    if (!inside(this.real, now) || !there || there.ino !== st.ino || there.dev !== st.dev) {
      throw new PathError(`The file moved while it was being opened; file tools only reach files inside ${this.dir}.`);
    }
  }

  /** `abs` (a real path inside the work folder) as the model should see it: relative, with `/`. */
  display(abs: string, from: string = this.real): string {
    const rel = path.relative(from, abs);
    return (rel === '' ? '.' : rel).split(path.sep).join('/');
  }
}
