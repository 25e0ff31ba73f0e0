import fs from 'node:fs';
import path from 'node:path';
import { betaAgentToolset20260401 } from '@anthropic-ai/sdk/tools/agent-toolset/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalHand, type LocalHand } from '../../main/hands/local';
import { tmpDir } from '../helpers/tmp';

/**
 * Corral's local hand against the SDK's reference implementation of agent_toolset_20260401
 * (`betaAgentToolset20260401`), on the same inputs in two identical folders. Each row says what
 * must be the same (error or not, the effect on the files, the lines or paths selected) and,
 * where Corral differs on purpose, why.
 */

type Run = { text: string; isError: boolean };
interface Row {
  tool: 'read' | 'write' | 'edit' | 'glob' | 'grep';
  input: Record<string, unknown>;
  /** What is compared beyond "both fail or both succeed" and the files left behind. */
  same: (ours: Run, ref: Run, root: { ours: string; ref: string }) => void;
  /** Where Corral's output differs on purpose, and why. */
  differs?: string;
}

/** Corral's read numbers lines like `cat -n`; stripped, the text must be the reference's. */
const unnumbered = (s: string) => s.split('\n').map((l) => l.replace(/^ *\d+\t/, '')).join('\n');
const lines = (s: string) => s.split('\n').filter(Boolean);
const relative = (s: string, root: string) => lines(s).map((l) => (l.startsWith(root + '/') ? l.slice(root.length + 1) : l));

const NUMBERED =
  'Corral numbers the lines like `cat -n` (its read description says so, and view_range takes those numbers; edit shows the edited lines numbered too) and drops the final newline; the reference returns the raw text';
const WORDING = 'Corral words its messages as sentences that say what to do next (the count, more context or replace_all); the rule is the same';

const ROWS: Row[] = [
  { tool: 'read', input: { file_path: 'a.txt' }, differs: NUMBERED, same: (o, r) => expect(unnumbered(o.text)).toBe(r.text.replace(/\n$/, '')) },
  { tool: 'read', input: { file_path: 'a.txt', view_range: [2, 3] }, differs: NUMBERED, same: (o, r) => expect(unnumbered(o.text)).toBe(r.text) },
  { tool: 'read', input: { file_path: 'a.txt', view_range: [2, -1] }, differs: NUMBERED, same: (o, r) => expect(unnumbered(o.text)).toBe(r.text.replace(/\n$/, '')) },
  { tool: 'read', input: { file_path: 'a.txt', view_range: [3, 0] }, differs: NUMBERED, same: (o, r) => expect(unnumbered(o.text)).toBe(r.text.replace(/\n$/, '')) },
  { tool: 'read', input: { file_path: 'empty.txt' }, differs: 'Corral says the file is empty instead of returning nothing (an empty result reads as a failure)', same: (o, r) => (expect(r.text).toBe(''), expect(o.text).toMatch(/empty/)) },
  { tool: 'read', input: { file_path: 'nope.txt' }, same: (o, r) => (expect(r.text).toMatch(/no such file/), expect(o.text).toMatch(/not found: nope\.txt/)) },
  { tool: 'read', input: { file_path: 'src' }, same: (o, r) => (expect(r.text).toMatch(/not a regular file/), expect(o.text).toMatch(/is a directory/)) },
  { tool: 'read', input: { file_path: '../outside.txt' }, same: () => {} },
  { tool: 'write', input: { file_path: 'new/dir/f.txt', content: 'héllo' }, differs: 'Corral also says whether the file is new or what it replaced', same: (o, r) => (expect(r.text).toMatch(/6 bytes/), expect(o.text).toMatch(/6 bytes/)) },
  { tool: 'write', input: { file_path: 'a.txt', content: 'over' }, same: (o, r) => (expect(r.text).toMatch(/4 bytes/), expect(o.text).toMatch(/4 bytes/)) },
  { tool: 'write', input: { file_path: '../outside.txt', content: 'x' }, same: () => {} },
  { tool: 'edit', input: { file_path: 'dup.txt', old_string: 'x = 1', new_string: 'y' }, differs: WORDING, same: (o, r) => (expect(r.text).toMatch(/appears 2 times/), expect(o.text).toMatch(/occurs 2 times/)) },
  { tool: 'edit', input: { file_path: 'dup.txt', old_string: 'x = 1', new_string: 'z', replace_all: true }, differs: `${WORDING}; on success Corral shows the edited lines`, same: (o, r) => (expect(r.text).toMatch(/2 replacement/), expect(o.text).toMatch(/Replaced 2 occurrences/)) },
  { tool: 'edit', input: { file_path: 'a.txt', old_string: 'zzz', new_string: 'y' }, differs: WORDING, same: (o, r) => (expect(r.text).toMatch(/not found/), expect(o.text).toMatch(/not found/)) },
  // `$&` and `$1` in new_string are inserted literally by both (no replacement patterns).
  { tool: 'edit', input: { file_path: 'a.txt', old_string: 'two', new_string: '$&2 $1' }, same: (o, r) => (expect(r.text).toMatch(/1 replacement/), expect(o.text).toMatch(/Replaced 1 occurrence/)) },
  { tool: 'edit', input: { file_path: 'a.txt', old_string: '', new_string: 'q' }, same: (o, r) => (expect(r.text).toMatch(/old_string is required/), expect(o.text).toMatch(/"old_string" is empty/)) },
  { tool: 'edit', input: { file_path: 'nope.txt', old_string: 'a', new_string: 'b' }, same: (o, r) => (expect(r.text).toMatch(/no such file/), expect(o.text).toMatch(/not found/)) },
  {
    tool: 'grep',
    input: { pattern: 'TODO' },
    differs:
      'Corral lists paths relative to the work folder (the reference: absolute, revealing where the host keeps it), in path order (ripgrep\'s order varies from run to run), at most 500 lines with a note on how many more (the reference cuts at 100 KiB); it always skips node_modules and .git (ripgrep skips what .gitignore lists, and here there is none)',
    same: (o, r, root) => expect(lines(o.text)).toEqual(relative(r.text, root.ref).filter((l) => !l.startsWith('node_modules/')).sort()),
  },
  { tool: 'grep', input: { pattern: 'TODO', path: 'src/sub' }, differs: 'as above', same: (o, r, root) => expect(lines(o.text)).toEqual(relative(r.text, root.ref).sort()) },
  { tool: 'grep', input: { pattern: 'x = \\d' }, differs: 'as above', same: (o, r, root) => expect(lines(o.text)).toEqual(relative(r.text, root.ref).sort()) },
  { tool: 'grep', input: { pattern: 'nomatch' }, differs: 'Corral says what it searched for, and where', same: (o, r) => (expect(r.text).toBe('no matches'), expect(o.text).toMatch(/^No matches for \/nomatch\//)) },
  { tool: 'grep', input: { pattern: '(' }, differs: 'the reference passes the pattern to ripgrep, Corral checks it as a JavaScript RegExp (the same syntax on every hand it runs on)', same: () => {} },
  { tool: 'glob', input: { pattern: '../x' }, same: (o, r) => (expect(r.text).toMatch(/".." is not permitted/), expect(o.text).toMatch(/".." is not permitted/)) },
  { tool: 'glob', input: { pattern: '/etc/*' }, same: (o, r) => (expect(r.text).toMatch(/absolute pattern not permitted/), expect(o.text).toMatch(/must be relative/)) },
];

let hand: LocalHand;
const root = { ours: '', ref: '' };
let ref: Record<string, { run: (input: never) => Promise<unknown> }>;

function seed(dir: string): void {
  const put = (rel: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  };
  put('a.txt', 'one\ntwo\nthree\n');
  put('dup.txt', 'x = 1\nx = 1\n');
  put('empty.txt', '');
  put('src/b.ts', 'const TODO = 1;\nlet x = 2;\n');
  put('src/sub/c.ts', '// TODO later\nexport {};\n');
  put('node_modules/m/index.js', 'TODO in a dependency\n');
}

/** Every file under `dir` with its content: what a call left behind. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

beforeAll(() => {
  // Each in a folder of its own, inside a parent holding outside.txt (which neither may touch).
  for (const side of ['ours', 'ref'] as const) {
    const parent = tmpDir();
    fs.writeFileSync(path.join(parent, 'outside.txt'), 'secret\n');
    root[side] = path.join(fs.realpathSync(parent), 'work');
  }
}, 10_000);
afterAll(() => hand?.dispose());

describe('the local hand against the reference toolset', () => {
  it.each(ROWS.map((r) => [`${r.tool} ${JSON.stringify(r.input)}`, r] as const))('%s', async (_name, row) => {
    for (const side of ['ours', 'ref'] as const) {
      fs.rmSync(root[side], { recursive: true, force: true });
      fs.mkdirSync(root[side]);
      seed(root[side]);
    }
    await hand?.dispose();
    hand = createLocalHand({ workDir: root.ours, sandbox: false });
    ref = Object.fromEntries(betaAgentToolset20260401({ workdir: root.ref }).map((t) => [t.name, t as never]));

    const ours = await hand.execute(row.tool, row.input);
    let theirs: Run;
    try {
      theirs = { text: String(await ref[row.tool]!.run(row.input as never)), isError: false };
    } catch (err) {
      theirs = { text: (err as Error).message, isError: true };
    }
    const o = { text: typeof ours.content === 'string' ? ours.content : JSON.stringify(ours.content), isError: ours.isError };
    expect(o.isError, `Corral: ${o.text}\nreference: ${theirs.text}`).toBe(theirs.isError);
    expect(tree(root.ours)).toEqual(tree(root.ref));
    expect(fs.readFileSync(path.join(root.ours, '..', 'outside.txt'), 'utf8')).toBe('secret\n');
    row.same(o, theirs, root);
  });

  /**
   * The reference glob needs Node 22's fs.glob (here, on Node 20, it fails every call), so its
   * documented rule stands in: regular files matching the pattern, .git and node_modules skipped,
   * newest first, at most 200. Corral lists the same files but in path order (the same on every
   * kind of hand; sorting by time needs a stat per file that a phone's or a container's shell may
   * not offer), relative to the search folder, at most 1000 with a note saying how many more.
   */
  it('glob: the same files as the reference rule (which needs Node 22 here), in path order', async () => {
    fs.rmSync(root.ours, { recursive: true, force: true });
    fs.mkdirSync(root.ours);
    seed(root.ours);
    await hand?.dispose();
    hand = createLocalHand({ workDir: root.ours, sandbox: false });
    const refGlob = betaAgentToolset20260401({ workdir: root.ref }).find((t) => t.name === 'glob')!;
    const refRuns = typeof (fs as { glob?: unknown }).glob === 'function';
    if (!refRuns) await expect(refGlob.run({ pattern: '**/*.ts' } as never)).rejects.toThrow(/fsGlob/);
    const out = await hand.execute('glob', { pattern: '**/*.ts' });
    expect(out.isError).toBe(false);
    expect(lines(String(out.content))).toEqual(['src/b.ts', 'src/sub/c.ts']);
    const all = await hand.execute('glob', { pattern: '**/*.js' });
    expect(String(all.content)).toMatch(/^No files match/); // node_modules skipped, as the reference does
  });
});
