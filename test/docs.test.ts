import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');

/** The folders under main/ a layout should name: main's own, and those of hands/ and api/. */
function mainFolders(): string[] {
  const dirs = (rel: string) =>
    fs
      .readdirSync(path.join(root, rel), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  return [...dirs('main'), ...dirs('main/hands').map((d) => `hands/${d}`), ...dirs('main/api').map((d) => `api/${d}`)];
}

/** The fenced block after a heading. */
function blockAfter(text: string, heading: string): string {
  const at = text.indexOf(heading);
  expect(at, heading).toBeGreaterThan(-1);
  const open = text.indexOf('```', at);
  return text.slice(open + 3, text.indexOf('```', open + 3));
}

/** Whether a layout block names the folder (`hands/` under main/, or `api/http/` on one line). */
const names = (block: string, folder: string) => {
  const last = folder.split('/').pop()!;
  return block.includes(`${folder}/`) || new RegExp(`(^|\\s)${last}/`, 'm').test(block);
};

describe('the documents describe the house as it is', () => {
  it('the README links the architecture document in the repository, not one outside it', () => {
    const readme = read('README.md');
    expect(readme).toContain('(docs/architecture.md)');
    expect(fs.existsSync(path.join(root, 'docs/architecture.md'))).toBe(true);
    expect(readme).not.toMatch(/\.\.\/shared\//);
  });

  it("the README's layout and the architecture document name every folder under main/", () => {
    const layout = blockAfter(read('README.md'), '## Layout');
    const folders = blockAfter(read('docs/architecture.md'), '## Folders and what each owns');
    for (const f of mainFolders()) {
      expect(names(layout, f), `README layout: ${f}`).toBe(true);
      expect(names(folders, f), `docs/architecture.md: ${f}`).toBe(true);
    }
    expect(mainFolders()).toContain('api/http'); // the scan sees nested folders
  });

  it('every folder the README layout names exists', () => {
    const layout = blockAfter(read('README.md'), '## Layout');
    const named = [...layout.matchAll(/(?:^|\s)([a-z-]+(?:\/[a-z-]+)*)\//gm)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    const top = ['main', 'preload', 'renderer', 'e2e', 'test', 'bench', 'scripts', 'docs'];
    const exists = (n: string) => [n, `main/${n}`, `main/hands/${n}`, `main/api/${n}`].some((p) => fs.existsSync(path.join(root, p)));
    expect(named.filter((n) => !exists(n) && !top.includes(n))).toEqual([]);
  });
});
