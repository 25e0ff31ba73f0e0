import fs from 'node:fs';
import path from 'node:path';

/** A path the model gave that leads outside the work folder (or nowhere sensible). */
export class PathError extends Error {}

/**
 * Resolves `p` as the real path it leads to, following symlinks where they exist. For a path
 * whose tail does not exist yet, the deepest existing ancestor is resolved and the rest
 * appended; a dangling symlink is followed to where it points.
 */
function realish(abs: string, depth = 0): string {
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

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/** The work folder and how to resolve the paths a model sends against it. */
export class WorkDir {
  /** The folder as given (absolute). */
  readonly dir: string;
  /** The folder with symlinks resolved. */
  readonly real: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
    fs.mkdirSync(this.dir, { recursive: true });
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

  /** `abs` (a real path inside the work folder) as the model should see it: relative, with `/`. */
  display(abs: string, from: string = this.real): string {
    const rel = path.relative(from, abs);
    return (rel === '' ? '.' : rel).split(path.sep).join('/');
  }
}
