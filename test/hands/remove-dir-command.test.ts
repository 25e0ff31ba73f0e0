/**
 * A session's folder on a shared host is removed at the lowest CPU priority where `nice` exists,
 * and still removed where it does not. The command runs in a real `sh`, with an `rm` on its PATH
 * that records the priority it ran at, then does the real removal.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeDirCommand } from '../../main/hands/remote/shell-hand';
import { tmpDir } from '../helpers/tmp';

/** A folder with an `rm` that writes its own /proc stat line to $STAT_OUT, then runs /bin/rm. */
function recordingRm(): string {
  const bin = tmpDir('corral-rm-bin-');
  fs.writeFileSync(path.join(bin, 'rm'), '#!/bin/sh\nread -r stat < /proc/$$/stat\necho "$stat" > "$STAT_OUT"\nexec /bin/rm "$@"\n', { mode: 0o755 });
  return bin;
}

/** Runs the command in `sh` with `PATH`; returns the niceness `rm` ran at. */
function runRemoval(dir: string, PATH: string): number {
  const statOut = path.join(tmpDir(), 'stat');
  const r = spawnSync('/bin/sh', ['-c', removeDirCommand(dir)], { env: { PATH, STAT_OUT: statOut }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  // Field 19 of /proc/PID/stat is the niceness; the command name (field 2) is `(rm)`, no spaces.
  return Number(fs.readFileSync(statOut, 'utf8').trim().split(' ')[18]);
}

/** A folder of a few files, with a quote and a space in its name, and a nested folder. */
function sessionFolder(): string {
  const dir = path.join(tmpDir(), "it's a session");
  fs.mkdirSync(path.join(dir, 'src', 'deep'), { recursive: true });
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(dir, 'src', 'deep', `f${i}.txt`), 'x');
  return dir;
}

describe('removeDirCommand', () => {
  it('removes the folder at niceness 19 when nice exists', () => {
    const dir = sessionFolder();
    const nice = runRemoval(dir, `${recordingRm()}:/usr/bin:/bin`);
    expect(nice).toBe(19);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.existsSync(path.dirname(dir))).toBe(true);
  });

  it('still removes the folder, at the caller priority, where there is no nice', () => {
    const dir = sessionFolder();
    const nice = runRemoval(dir, recordingRm());
    expect(nice).toBe(os.getPriority());
    expect(fs.existsSync(dir)).toBe(false);
  });
});
