import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTextFile } from '../../main/hands/write-text';
import { tmpDir } from '../helpers/tmp';

describe('writeTextFile', () => {
  it('writes the same UTF-8 bytes as writeFile, slice by slice, without splitting a surrogate pair', async () => {
    const dir = tmpDir();
    // In short slices, emoji (surrogate pairs) straddle slice boundaries.
    const text = `héllo ${'😀a'.repeat(50)} wörld ${'x😀'.repeat(50)}\n`;
    fs.writeFileSync(path.join(dir, 'whole.txt'), text);
    for (const slice of [1, 2, 3, 7]) {
      await writeTextFile(path.join(dir, 'sliced.txt'), text, slice);
      expect(fs.readFileSync(path.join(dir, 'sliced.txt')).equals(fs.readFileSync(path.join(dir, 'whole.txt'))), `slices of ${slice}`).toBe(true);
    }

    await writeTextFile(path.join(dir, 'sliced.txt'), 'short');
    expect(fs.readFileSync(path.join(dir, 'sliced.txt'), 'utf8')).toBe('short');
    await writeTextFile(path.join(dir, 'empty.txt'), '');
    expect(fs.readFileSync(path.join(dir, 'empty.txt'), 'utf8')).toBe('');
  });
});
