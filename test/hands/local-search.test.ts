/** The local hand's search tools: glob and grep. */
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { globToRegExp } from '../../main/hands/tools/glob';
import { dir, hand, put, useLocalHand } from '../helpers/local-hand';

useLocalHand();

describe('glob', () => {
  beforeEach(() => {
    for (const f of ['src/a.ts', 'src/sub/b.ts', 'src/c.js', 'README.md', '.hidden/x.ts', 'node_modules/pkg/index.ts', 'src/sub/deeper/d.ts']) put(f, 'x');
  });
  const list = async (input: Record<string, unknown>) => {
    const r = await hand.execute('glob', input);
    expect(r.isError, r.content).toBe(false);
    return r.content.split('\n');
  };

  it('matches ** across folders, sorted, skipping node_modules', async () => {
    expect(await list({ pattern: '**/*.ts' })).toEqual(['.hidden/x.ts', 'src/a.ts', 'src/sub/b.ts', 'src/sub/deeper/d.ts']);
    expect(await list({ pattern: 'src/**/*.ts' })).toEqual(['src/a.ts', 'src/sub/b.ts', 'src/sub/deeper/d.ts']);
    expect(await list({ pattern: 'node_modules/**/*.ts' })).toEqual(['node_modules/pkg/index.ts']);
  });

  it('keeps * and ? within one folder and supports {a,b}', async () => {
    expect(await list({ pattern: '*.md' })).toEqual(['README.md']);
    expect(await list({ pattern: 'src/*.{ts,js}' })).toEqual(['src/a.ts', 'src/c.js']);
    expect(await list({ pattern: 'src/?.ts' })).toEqual(['src/a.ts']);
  });

  it('searches under path, listing paths relative to it', async () => {
    expect(await list({ pattern: '**/*.ts', path: 'src/sub' })).toEqual(['b.ts', 'deeper/d.ts']);
  });

  it('says when nothing matches, and refuses a bad path or pattern', async () => {
    const none = await hand.execute('glob', { pattern: '**/*.py' });
    expect(none.isError).toBe(false);
    expect(none.content).toMatch(/No files match/);
    const notDir = await hand.execute('glob', { pattern: '*', path: 'README.md' });
    expect(notDir.isError).toBe(true);
    expect(notDir.content).toMatch(/not a directory/);
    const missing = await hand.execute('glob', { pattern: '*', path: 'nowhere' });
    expect(missing.isError).toBe(true);
    const absolute = await hand.execute('glob', { pattern: '/etc/*' });
    expect(absolute.isError).toBe(true);
    expect(absolute.content).toMatch(/must be relative/);
    const open = await hand.execute('glob', { pattern: 'src/*.{ts,js' });
    expect(open.isError).toBe(true);
  });

  it('lists at most 1000 files with a note saying how many more', async () => {
    fs.mkdirSync(path.join(dir, 'many'));
    for (let i = 0; i < 1005; i++) fs.writeFileSync(path.join(dir, 'many', `f${String(i).padStart(4, '0')}.txt`), '');
    const lines = await list({ pattern: 'many/*.txt' });
    expect(lines).toHaveLength(1001);
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines[999]).toBe('many/f0999.txt');
    expect(lines[1000]).toMatch(/5 more matching files not listed \(1,005 in all\)/);
  });

  it('translates patterns to regular expressions', () => {
    const m = (p: string, s: string) => globToRegExp(p).test(s);
    expect(m('**/*.ts', 'a.ts')).toBe(true);
    expect(m('**/*.ts', 'a/b/c.ts')).toBe(true);
    expect(m('*.ts', 'a/b.ts')).toBe(false);
    expect(m('a/**/b', 'a/b')).toBe(true);
    expect(m('a/**/b', 'a/x/y/b')).toBe(true);
    expect(m('a/**', 'a/x/y')).toBe(true);
    expect(m('{src,lib}/**/*.{ts,tsx}', 'lib/x/y.tsx')).toBe(true);
    expect(m('{src,lib}/**/*.{ts,tsx}', 'test/y.ts')).toBe(false);
    expect(m('file[0-9].txt', 'file7.txt')).toBe(true);
    expect(m('file[!0-9].txt', 'file7.txt')).toBe(false);
    expect(m('a.b', 'axb')).toBe(false);
    expect(m('(x)+.txt', '(x)+.txt')).toBe(true);
    expect(m('\\*.txt', '*.txt')).toBe(true);
    expect(m('\\*.txt', 'a.txt')).toBe(false);
  });
});

describe('grep', () => {
  beforeEach(() => {
    put('src/one.ts', 'const x = 1;\n// TODO: fix\nconst y = 2;\n');
    put('src/two.ts', 'nothing here\nTODO again\n');
    put('node_modules/dep/index.js', 'TODO in a dependency\n');
    put('.git/config', 'TODO in git\n');
    put('blob.bin', Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]));
  });

  it('lists file:line:text for matches, skipping binaries, node_modules and .git', async () => {
    const r = await hand.execute('grep', { pattern: 'TODO' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('src/one.ts:2:// TODO: fix\nsrc/two.ts:2:TODO again');
    expect(r.details).toMatchObject({ matches: 2, files_with_matches: 2, skipped_binary: 1 });
  });

  it('takes a RegExp source and an optional file or folder', async () => {
    expect((await hand.execute('grep', { pattern: 'const [xy] = \\d;' })).content).toBe('src/one.ts:1:const x = 1;\nsrc/one.ts:3:const y = 2;');
    expect((await hand.execute('grep', { pattern: 'TODO', path: 'src/two.ts' })).content).toBe('src/two.ts:2:TODO again');
    expect((await hand.execute('grep', { pattern: 'TODO', path: 'src' })).content.split('\n')).toHaveLength(2);
    const none = await hand.execute('grep', { pattern: 'FIXME' });
    expect(none.isError).toBe(false);
    expect(none.content).toMatch(/No matches/);
  });

  it('refuses an invalid regular expression clearly', async () => {
    const r = await hand.execute('grep', { pattern: 'foo(' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^Invalid regular expression/);
  });

  it('lists at most 500 lines with a note saying how many more', async () => {
    put('big.txt', Array.from({ length: 620 }, (_, i) => `hit ${i + 1}`).join('\n'));
    const r = await hand.execute('grep', { pattern: '^hit', path: 'big.txt' });
    const lines = r.content.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[499]).toBe('big.txt:500:hit 500');
    expect(lines[500]).toMatch(/120 more matching lines not listed \(620 in all\)/);
  });
});
