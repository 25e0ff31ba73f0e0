/**
 * Whole-file reads and writes inside the container, through exec: `head -c` out of the file
 * (bounded, binary-safe: the exec stream carries raw bytes) and `cat >` from stdin. Going
 * through the container's own shell keeps its user's permissions, follows symlinks and keeps
 * an existing file's mode, unlike the archive API. Failures become RemoteFileError codes.
 */
import { RemoteFileError } from '../remote/types';

/** What the shell's runner gives back for one collected command. */
export interface Collected {
  exitCode: number | null;
  error?: Error;
  lost?: string;
  stdout: Buffer;
  /** Bytes the command wrote to stdout in all (`stdout` holds at most `maxStdout`). */
  stdoutBytes: number;
  stderr: string;
}
export type Runner = (cmd: string[], opts: { stdin?: Buffer; maxStdout?: number }) => Promise<Collected>;

/** Exit code of the scripts' own checks; stderr then starts with `corral:CODE`. */
const CHECKED = 99;

const READ = `f=$1; max=$2
if [ -d "$f" ]; then echo "corral:EISDIR" >&2; exit ${CHECKED}; fi
if [ ! -e "$f" ]; then echo "corral:ENOENT" >&2; exit ${CHECKED}; fi
if [ ! -r "$f" ]; then echo "corral:EACCES" >&2; exit ${CHECKED}; fi
if [ -f "$f" ]; then
  s=$(stat -L -c %s "$f" 2>/dev/null) || s=
  case "$s" in ''|*[!0-9]*) ;; *) if [ "$s" -gt "$max" ]; then echo "corral:TOOBIG $s" >&2; exit ${CHECKED}; fi ;; esac
fi
if command -v head >/dev/null 2>&1; then exec head -c $((max + 1)) < "$f"; fi
exec cat < "$f"`;

// Every way out reads all of stdin first: an exec that ends with stdin unread loses its stderr
// on Podman (see DRAINED in process-group.ts), and with it the reason the write failed.
const WRITE = `f=$1
if [ -d "$f" ]; then echo "corral:EISDIR" >&2; cat >/dev/null 2>&1; exit ${CHECKED}; fi
d=\${f%/*}
if [ -n "$d" ] && [ ! -d "$d" ]; then mkdir -p "$d" || { cat >/dev/null 2>&1; exit ${CHECKED + 1}; }; fi
cat > "$f" || { r=$?; cat >/dev/null 2>&1; exit $r; }`;

const mb = (n: number) => (n < 1024 * 1024 ? `${n.toLocaleString('en-US')} bytes` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/** How much of a failed command's stderr is kept as the reason. */
const MAX_REASON_CHARS = 2000;

/** The code a command's failure stands for. */
function failure(r: Collected, path: string, verb: string): RemoteFileError {
  if (r.lost) return new RemoteFileError('LOST', r.lost);
  if (r.error) return new RemoteFileError('OTHER', `cannot ${verb} ${path}: ${r.error.message}`);
  const err = r.stderr.trim();
  const own = /^corral:(\w+)(?: (\d+))?/.exec(err);
  if (own && r.exitCode === CHECKED) {
    const code = own[1] as RemoteFileError['code'];
    if (code === 'TOOBIG') return new RemoteFileError('TOOBIG', `${path} is ${mb(Number(own[2]))}`);
    return new RemoteFileError(code, `${path}: ${{ ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' }[code as 'ENOENT'] ?? code}`);
  }
  // Never stdout: a read's stdout is the file itself (up to 64 MiB of it), not why it failed.
  const said = err ? (err.length > MAX_REASON_CHARS ? `${err.slice(0, MAX_REASON_CHARS)}…` : err) : r.exitCode === null ? 'the command was stopped before it finished' : `exit code ${r.exitCode}`;
  if (/permission denied|operation not permitted/i.test(said)) return new RemoteFileError('EACCES', said);
  if (/is a directory/i.test(said)) return new RemoteFileError('EISDIR', said);
  if (/no such file/i.test(said)) return new RemoteFileError('ENOENT', said);
  return new RemoteFileError('OTHER', `cannot ${verb} ${path}: ${said}`);
}

export async function readFileVia(run: Runner, path: string, maxBytes: number): Promise<Buffer> {
  const r = await run(['/bin/sh', '-c', READ, 'sh', path, String(maxBytes)], { maxStdout: maxBytes + 1 });
  if (r.exitCode !== 0) throw failure(r, path, 'read');
  if (r.stdoutBytes > maxBytes) throw new RemoteFileError('TOOBIG', `${path} is larger than ${mb(maxBytes)}`);
  return r.stdout;
}

export async function writeFileVia(run: Runner, path: string, data: Buffer): Promise<void> {
  const r = await run(['/bin/sh', '-c', WRITE, 'sh', path], { stdin: data, maxStdout: 64 * 1024 });
  if (r.exitCode !== 0) throw failure(r, path, 'write');
}
