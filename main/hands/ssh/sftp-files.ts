/**
 * Whole-file read and write over SFTP, with SFTP status codes turned into RemoteFileError codes.
 */
import path from 'node:path/posix';
import type { SFTPWrapper, Stats } from 'ssh2';
import { RemoteFileError } from '../remote/types';

// SFTP status codes (draft-ietf-secsh-filexfer-02).
const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const NO_CONNECTION = 6;
const CONNECTION_LOST = 7;

const READ_CHUNK = 1024 * 1024;

type SftpErr = Error & { code?: unknown };

/** Maps an SFTP error for `p` to a RemoteFileError (LOST when the channel or connection is gone). */
export function fileErrorFrom(err: unknown, p: string): RemoteFileError {
  if (err instanceof RemoteFileError) return err;
  const e = err as SftpErr;
  const msg = e?.message ?? String(err);
  switch (e?.code) {
    case NO_SUCH_FILE:
      return new RemoteFileError('ENOENT', `${p} does not exist`);
    case PERMISSION_DENIED:
      return new RemoteFileError('EACCES', `${p}: permission denied`);
    case NO_CONNECTION:
    case CONNECTION_LOST:
      return new RemoteFileError('LOST', `the SFTP connection was lost (${msg})`);
  }
  if (/No response from server|not connected|channel.*clos|No SFTP/i.test(msg)) return new RemoteFileError('LOST', `the SFTP connection was lost (${msg})`);
  return new RemoteFileError('OTHER', msg);
}

function call<T>(fn: (cb: (err: Error | undefined | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    try {
      fn((err, value) => (err ? reject(err) : resolve(value)));
    } catch (err) {
      reject(err);
    }
  });
}

const stat = (sftp: SFTPWrapper, p: string) => call<Stats>((cb) => sftp.stat(p, cb));

/** Reads the whole file; TOOBIG when it is (or grows) larger than maxBytes. */
export async function readRemoteFile(sftp: SFTPWrapper, p: string, maxBytes: number): Promise<Buffer> {
  let st: Stats;
  try {
    st = await stat(sftp, p);
  } catch (err) {
    throw fileErrorFrom(err, p);
  }
  if (st.isDirectory()) throw new RemoteFileError('EISDIR', `${p} is a directory`);
  if (st.size > maxBytes) throw new RemoteFileError('TOOBIG', `${p} is ${st.size} bytes, more than ${maxBytes}`);
  let handle: Buffer;
  try {
    handle = await call<Buffer>((cb) => sftp.open(p, 'r', cb));
  } catch (err) {
    throw fileErrorFrom(err, p);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const want = Math.min(READ_CHUNK, maxBytes + 1 - total);
      const buf = Buffer.allocUnsafe(want);
      const n = await call<number>((cb) => sftp.read(handle, buf, 0, want, total, (err, bytes) => cb(err, bytes)));
      if (n <= 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) throw new RemoteFileError('TOOBIG', `${p} is larger than ${maxBytes} bytes`);
    }
  } catch (err) {
    throw fileErrorFrom(err, p);
  } finally {
    sftp.close(handle, () => {});
  }
  return Buffer.concat(chunks, total);
}

/** Makes `dir` and its parents, like mkdir -p. */
async function mkdirp(sftp: SFTPWrapper, dir: string): Promise<void> {
  try {
    const st = await stat(sftp, dir);
    if (!st.isDirectory()) throw new RemoteFileError('OTHER', `${dir} exists and is not a directory`);
    return;
  } catch (err) {
    const mapped = fileErrorFrom(err, dir);
    if (mapped.code !== 'ENOENT') throw mapped;
  }
  const parent = path.dirname(dir);
  if (parent !== dir) await mkdirp(sftp, parent);
  try {
    await call<void>((cb) => sftp.mkdir(dir, (err) => cb(err, undefined)));
  } catch (err) {
    // Someone may have made it meanwhile.
    const again = await stat(sftp, dir).catch(() => undefined);
    if (!again?.isDirectory()) throw fileErrorFrom(err, dir);
  }
}

/** Writes the whole file (truncating), making missing parent folders first. */
export async function writeRemoteFile(sftp: SFTPWrapper, p: string, data: Buffer): Promise<void> {
  const once = () => call<void>((cb) => sftp.writeFile(p, data, (err) => cb(err, undefined)));
  try {
    await once();
    return;
  } catch (err) {
    const mapped = fileErrorFrom(err, p);
    if (mapped.code === 'ENOENT') {
      await mkdirp(sftp, path.dirname(p));
      try {
        await once();
        return;
      } catch (err2) {
        throw await refine(sftp, err2, p);
      }
    }
    throw await refine(sftp, err, p);
  }
}

/** A generic failure on a path that is a directory is EISDIR. */
async function refine(sftp: SFTPWrapper, err: unknown, p: string): Promise<RemoteFileError> {
  const mapped = fileErrorFrom(err, p);
  if (mapped.code !== 'OTHER') return mapped;
  const st = await stat(sftp, p).catch(() => undefined);
  if (st?.isDirectory()) return new RemoteFileError('EISDIR', `${p} is a directory`);
  return mapped;
}
