import { LinuxFileType, type AdbSync, type AdbSyncStat } from '@yume-chan/adb';
import { ReadableStream } from '@yume-chan/stream-extra';
import { RemoteFileError } from '../remote/types';

/** Mode of files the hand creates; an existing file keeps its own. */
const NEW_FILE_PERMISSION = 0o644;

/** Turns a FAIL answer of the device's sync service into a RemoteFileError. */
export function syncErrorToFileError(err: unknown): RemoteFileError {
  const message = err instanceof Error ? err.message : String(err);
  if (/No such file or directory|does not exist/i.test(message)) return new RemoteFileError('ENOENT', message);
  if (/Is a directory/i.test(message)) return new RemoteFileError('EISDIR', message);
  if (/Permission denied|Operation not permitted|Read-only file system/i.test(message)) return new RemoteFileError('EACCES', message);
  return new RemoteFileError('OTHER', message);
}

/** lstat through sync; undefined when the device says nothing is there (sync v1 cannot say why). */
async function lstat(sync: AdbSync, file: string): Promise<AdbSyncStat | undefined> {
  try {
    return await sync.lstat(file);
  } catch (err) {
    if (err instanceof Error && err.message === 'lstat error') return undefined;
    throw err;
  }
}

/** Reads a whole file (RECV); TOOBIG past maxBytes, without pulling the rest. */
export async function readDeviceFile(sync: AdbSync, file: string, maxBytes: number): Promise<Buffer> {
  const st = await lstat(sync, file);
  if (st?.type === LinuxFileType.Directory) throw new RemoteFileError('EISDIR', `${file} is a directory`);
  if (st?.type === LinuxFileType.File && st.size > BigInt(maxBytes)) throw new RemoteFileError('TOOBIG', `${file} has ${st.size} bytes, more than ${maxBytes}`);
  const reader = sync.read(file).getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    // A pull cannot be cancelled; the caller drops the whole sync stream instead.
    if (total > maxBytes) throw new RemoteFileError('TOOBIG', `${file} has more than ${maxBytes} bytes`);
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, total);
}

/** Writes a whole file (SEND), keeping an existing file's permissions; parents are created. */
export async function writeDeviceFile(sync: AdbSync, file: string, data: Buffer): Promise<void> {
  const st = await lstat(sync, file);
  if (st?.type === LinuxFileType.Directory) throw new RemoteFileError('EISDIR', `${file} is a directory`);
  const permission = st?.type === LinuxFileType.File ? st.permission & 0o7777 : NEW_FILE_PERMISSION;
  const body = new Uint8Array(data.buffer, data.byteOffset, data.length);
  await sync.write({
    filename: file,
    file: new ReadableStream<Uint8Array>({
      start(controller) {
        if (body.length) controller.enqueue(body);
        controller.close();
      },
    }),
    permission,
    mtime: Math.floor(Date.now() / 1000),
  });
}
