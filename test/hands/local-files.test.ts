/** The local hand's file tools (read, write, edit) and the rule that paths stay inside the work folder. */
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';
import { dir, hand, put, get, useLocalHand } from '../helpers/local-hand';
import { fullOutputText } from '../../main/hands/full-output';

useLocalHand();

describe('read', () => {
  beforeEach(() => put('notes.txt', 'first\nsecond\nthird\nfourth\n'));

  it('numbers lines like cat -n', async () => {
    const r = await hand.execute('read', { file_path: 'notes.txt' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('     1\tfirst\n     2\tsecond\n     3\tthird\n     4\tfourth');
    expect(r.details).toMatchObject({ total_lines: 4, bytes: 26 });
  });

  it('reads a view_range, with -1 or 0 meaning to the end', async () => {
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [2, 3] })).content).toBe('     2\tsecond\n     3\tthird');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [3, -1] })).content).toBe('     3\tthird\n     4\tfourth');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [4, 0] })).content).toBe('     4\tfourth');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [4, 99] })).content).toBe('     4\tfourth');
    const past = await hand.execute('read', { file_path: 'notes.txt', view_range: [9, 10] });
    expect(past.isError).toBe(true);
    expect(past.content).toMatch(/has only 4 lines/);
    const backwards = await hand.execute('read', { file_path: 'notes.txt', view_range: [3, 2] });
    expect(backwards.isError).toBe(true);
    expect(backwards.content).toMatch(/before start_line/);
    const zero = await hand.execute('read', { file_path: 'notes.txt', view_range: [0, 2] });
    expect(zero.isError).toBe(true);
    const short = await hand.execute('read', { file_path: 'notes.txt', view_range: [1] });
    expect(short.isError).toBe(true);
  });

  it('refuses missing files, directories and binary files', async () => {
    const missing = await hand.execute('read', { file_path: 'nope.txt' });
    expect(missing).toMatchObject({ isError: true, content: 'File not found: nope.txt' });
    fs.mkdirSync(path.join(dir, 'folder'));
    const folder = await hand.execute('read', { file_path: 'folder' });
    expect(folder.isError).toBe(true);
    expect(folder.content).toMatch(/folder is a directory/);
    put('image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const bin = await hand.execute('read', { file_path: 'image.bin' });
    expect(bin.isError).toBe(true);
    expect(bin.content).toMatch(/binary/);
    expect(bin.content.length).toBeLessThan(300);
  });

  it('reads an empty file and an absolute path inside the work folder', async () => {
    put('empty.txt', '');
    const empty = await hand.execute('read', { file_path: 'empty.txt' });
    expect(empty.isError).toBe(false);
    expect(empty.content).toMatch(/empty/);
    const abs = await hand.execute('read', { file_path: path.join(dir, 'notes.txt'), view_range: [1, 1] });
    expect(abs).toMatchObject({ isError: false, content: '     1\tfirst' });
  });

  it('caps a long file for the model and keeps the whole listing', async () => {
    put('long.txt', Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`).join('\n'));
    const r = await hand.execute('read', { file_path: 'long.txt' });
    expect(r.details).toMatchObject({ truncated: true, total_lines: 20_000 });
    expect(r.content.length).toBeLessThanOrEqual(30_000);
    expect(r.content.startsWith('     1\tline 1\n')).toBe(true);
    expect(r.content.endsWith(' 20000\tline 20000')).toBe(true);
    expect(r.content).toMatch(/characters cut here/);
    expect(fullOutputText(r.fullOutput!).split('\n')).toHaveLength(20_000);
  });
});

describe('write', () => {
  it('creates parent folders and reports the bytes written', async () => {
    const r = await hand.execute('write', { file_path: 'deep/er/file.txt', content: 'héllo\n' });
    expect(r).toMatchObject({ isError: false, content: 'Wrote 7 bytes to deep/er/file.txt (new file).' });
    expect(get('deep/er/file.txt')).toBe('héllo\n');
    const again = await hand.execute('write', { file_path: 'deep/er/file.txt', content: '' });
    expect(again.content).toBe('Wrote 0 bytes to deep/er/file.txt (replaced its previous 7 bytes).');
    expect(get('deep/er/file.txt')).toBe('');
  });

  it('refuses to write over a directory', async () => {
    fs.mkdirSync(path.join(dir, 'sub'));
    const r = await hand.execute('write', { file_path: 'sub', content: 'x' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/is a directory/);
    expect(fs.statSync(path.join(dir, 'sub')).isDirectory()).toBe(true);
  });
});

describe('edit', () => {
  beforeEach(() => put('code.js', 'let a = 1;\nlet b = 2;\nlog(a);\nlog(a);\nlog(a);\n'));

  it('replaces a unique string and shows the edited lines', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'let b = 2;', new_string: 'let b = "$&";' });
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/^Replaced 1 occurrence in code\.js\./);
    expect(r.content).toContain('     2\tlet b = "$&";');
    expect(get('code.js')).toBe('let a = 1;\nlet b = "$&";\nlog(a);\nlog(a);\nlog(a);\n');
  });

  it('refuses a string that occurs more than once, saying how many times', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'log(a);', new_string: 'log(b);' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/occurs 3 times in code\.js/);
    expect(r.content).toMatch(/replace_all/);
    expect(get('code.js')).toContain('log(a);\nlog(a);\nlog(a);');
  });

  it('replaces every occurrence with replace_all', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'log(a);', new_string: 'log(b);', replace_all: true });
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/^Replaced 3 occurrences/);
    expect(get('code.js')).toBe('let a = 1;\nlet b = 2;\nlog(b);\nlog(b);\nlog(b);\n');
  });

  it('reports a string that is not found, an identical replacement and a missing file', async () => {
    const notFound = await hand.execute('edit', { file_path: 'code.js', old_string: 'let c', new_string: 'let d' });
    expect(notFound.isError).toBe(true);
    expect(notFound.content).toMatch(/not found in code\.js/);
    const same = await hand.execute('edit', { file_path: 'code.js', old_string: 'let a', new_string: 'let a' });
    expect(same.isError).toBe(true);
    expect(same.content).toMatch(/are the same/);
    const empty = await hand.execute('edit', { file_path: 'code.js', old_string: '', new_string: 'x' });
    expect(empty.isError).toBe(true);
    const missing = await hand.execute('edit', { file_path: 'gone.js', old_string: 'a', new_string: 'b' });
    expect(missing).toMatchObject({ isError: true, content: 'File not found: gone.js' });
    expect(get('code.js')).toBe('let a = 1;\nlet b = 2;\nlog(a);\nlog(a);\nlog(a);\n');
  });
});

describe('paths stay inside the work folder', () => {
  let outside: string;
  beforeEach(() => {
    outside = fs.realpathSync(tmpDir('corral-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n');
  });

  it('refuses ../ and absolute paths outside', async () => {
    for (const p of ['../../etc/passwd', '/etc/passwd', '..', path.join(outside, 'secret.txt'), `sub/../../${path.basename(dir)}-x/f`]) {
      const r = await hand.execute('read', { file_path: p });
      expect(r.isError, p).toBe(true);
      expect(r.content).toMatch(/is outside the work folder/);
    }
    const w = await hand.execute('write', { file_path: path.join(outside, 'new.txt'), content: 'x' });
    expect(w.isError).toBe(true);
    expect(fs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
    const w2 = await hand.execute('write', { file_path: '../escape.txt', content: 'x' });
    expect(w2.isError).toBe(true);
    expect(fs.existsSync(path.join(dir, '..', 'escape.txt'))).toBe(false);
    const e = await hand.execute('edit', { file_path: '/etc/passwd', old_string: 'root', new_string: 'toor' });
    expect(e.isError).toBe(true);
    expect((await hand.execute('glob', { pattern: '*', path: '..' })).isError).toBe(true);
    expect((await hand.execute('grep', { pattern: 'root', path: '/etc' })).isError).toBe(true);
  });

  it('refuses symlinks that lead outside, for reading and for writing', async () => {
    fs.symlinkSync(outside, path.join(dir, 'linkdir'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'linkfile'));
    fs.symlinkSync(path.join(outside, 'created-through-link.txt'), path.join(dir, 'dangling'));
    for (const [tool, input] of [
      ['read', { file_path: 'linkfile' }],
      ['read', { file_path: 'linkdir/secret.txt' }],
      ['write', { file_path: 'linkdir/planted.txt', content: 'x' }],
      ['write', { file_path: 'dangling', content: 'x' }],
      ['edit', { file_path: 'linkfile', old_string: 'outside', new_string: 'inside' }],
      ['grep', { pattern: 'secret', path: 'linkdir' }],
    ] as const) {
      const r = await hand.execute(tool, { ...input });
      expect(r.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(r.content).toMatch(/outside the work folder \(through a symbolic link\)/);
    }
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    // Walking the tree does not follow them either.
    const grep = await hand.execute('grep', { pattern: 'secret' });
    expect(grep.content).toMatch(/No matches/);
    const glob = await hand.execute('glob', { pattern: '**/*' });
    expect(glob.content).not.toMatch(/secret|linkfile/);
  });

  it('follows symlinks that stay inside', async () => {
    put('real/data.txt', 'inside\n');
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'alias'));
    const r = await hand.execute('read', { file_path: 'alias/data.txt' });
    expect(r).toMatchObject({ isError: false, content: '     1\tinside' });
  });
});
