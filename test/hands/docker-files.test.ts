/**
 * How the docker hand's whole-file reads and writes (main/hands/docker/files.ts) turn a failed
 * command into a RemoteFileError, with a runner standing in for the container: the reason is
 * the command's stderr or its exit code, never the file's bytes it had sent so far.
 */
import { describe, expect, it } from 'vitest';
import { readFileVia, writeFileVia, type Collected, type Runner } from '../../main/hands/docker/files';
import { RemoteFileError } from '../../main/hands/remote/types';

const runner = (r: Partial<Collected>): Runner => async () => ({ exitCode: 0, stdout: Buffer.alloc(0), stdoutBytes: 0, stderr: '', ...r });

describe('the docker hand: a failed file command', () => {
  // A read whose exec ends early (its container dying, seen before the engine's event) has
  // sent part of the file: that part is not the reason, and it must not reach the model.
  it('a read that stops midway says so, without the part of the file it had read', async () => {
    const part = Buffer.alloc(1_500_000, 'a');
    for (const exitCode of [137, null]) {
      const err = (await readFileVia(runner({ exitCode, stdout: part, stdoutBytes: part.length }), '/work/big.txt', 64 * 1024 * 1024).catch((e: unknown) => e)) as RemoteFileError;
      expect(err).toBeInstanceOf(RemoteFileError);
      expect(err.code).toBe('OTHER');
      expect(err.message).toBe(`cannot read /work/big.txt: ${exitCode === null ? 'the command was stopped before it finished' : 'exit code 137'}`);
    }
  });

  it('the reason is the command\'s stderr, cut when it is long', async () => {
    const err = (await writeFileVia(runner({ exitCode: 1, stderr: `sh: write error: ${'x'.repeat(100_000)}` }), '/work/f', Buffer.from('hi')).catch((e: unknown) => e)) as RemoteFileError;
    expect(err.code).toBe('OTHER');
    expect(err.message.length).toBeLessThan(2100);
    expect(err.message).toMatch(/^cannot write \/work\/f: sh: write error: x+…$/);
    const denied = (await readFileVia(runner({ exitCode: 1, stderr: 'head: /work/f: Permission denied\n' }), '/work/f', 100).catch((e: unknown) => e)) as RemoteFileError;
    expect(denied.code).toBe('EACCES');
  });
});
