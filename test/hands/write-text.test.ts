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

  it('writes pieces of a text as the same bytes as the joined text, pairs split between pieces included', async () => {
    const dir = tmpDir();
    const text = `héllo ${'😀a'.repeat(300)} wörld ${'x😀'.repeat(300)}\n${'plain '.repeat(500)}`;
    fs.writeFileSync(path.join(dir, 'whole.txt'), text);
    // Cut at every 7th, 13th, 101st code unit: some cuts fall inside a surrogate pair; one piece is larger than a slice.
    for (const every of [7, 13, 101, 5000]) {
      const pieces: string[] = [];
      for (let i = 0; i < text.length; i += every) pieces.push(text.slice(i, i + every));
      for (const slice of [3, 64, 1024]) {
        await writeTextFile(path.join(dir, 'pieces.txt'), pieces, slice);
        expect(fs.readFileSync(path.join(dir, 'pieces.txt')).equals(fs.readFileSync(path.join(dir, 'whole.txt'))), `pieces of ${every}, slices of ${slice}`).toBe(true);
      }
    }
    await writeTextFile(path.join(dir, 'none.txt'), []);
    expect(fs.readFileSync(path.join(dir, 'none.txt'), 'utf8')).toBe('');
  });
});
