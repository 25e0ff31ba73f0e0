/** Which brain entry a host running from source forks: the build only while no source file is newer. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshBuiltEntry } from '../../main/brain/built-entry';
import { tmpDir } from '../helpers/tmp';

function checkout() {
  const root = tmpDir();
  const main = path.join(root, 'main');
  fs.mkdirSync(path.join(main, 'brain'), { recursive: true });
  fs.writeFileSync(path.join(main, 'brain', 'entry.ts'), '');
  return { main, built: path.join(root, 'out', 'main', 'brain-entry.js') };
}
const at = (file: string, seconds: number) => fs.utimesSync(file, seconds, seconds);
/** Dates every file and folder under `dir` (a folder's date changes as files come and go: it counts too). */
const allAt = (dir: string, seconds: number) => {
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) at(path.join(dir, f), seconds);
};

describe('freshBuiltEntry', () => {
  it('is the build when present and not older than any source file, and nothing otherwise', () => {
    const { main, built } = checkout();
    expect(freshBuiltEntry(main)).toBeUndefined(); // not built
    fs.mkdirSync(path.dirname(built), { recursive: true });
    fs.writeFileSync(built, '');
    allAt(main, 1_000);
    at(built, 2_000);
    expect(freshBuiltEntry(main)).toBe(built);
    // One file deep in the tree edited after the build: the source is what runs.
    fs.mkdirSync(path.join(main, 'hands', 'docker'), { recursive: true });
    fs.writeFileSync(path.join(main, 'hands', 'docker', 'exec.ts'), '');
    allAt(main, 1_000);
    at(path.join(main, 'hands', 'docker', 'exec.ts'), 3_000);
    expect(freshBuiltEntry(main)).toBeUndefined();
    // A file removed after the build (its folder's date moves): the source too.
    allAt(main, 1_000);
    fs.rmSync(path.join(main, 'hands', 'docker', 'exec.ts'));
    expect(freshBuiltEntry(main)).toBeUndefined();
  });
});
