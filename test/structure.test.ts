import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..');

function files(dir: string, ext = /\.(ts|tsx|mts|cts)$/): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { recursive: true, encoding: 'utf8' }).filter((f) => ext.test(f)).map((f) => path.join(dir, f));
}
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const ELECTRON_IMPORT = /(from\s+['"]electron(\/[^'"]*)?['"]|require\(\s*['"]electron['"]\s*\)|import\(\s*['"]electron['"]\s*\))/;

describe('rules of the house', () => {
  it('only main/shell imports electron', () => {
    const offenders = files('main').filter((f) => !f.startsWith(path.join('main', 'shell')) && ELECTRON_IMPORT.test(read(f)));
    expect(offenders).toEqual([]);
    // The rule is live: the shell does import it.
    expect(files('main/shell').some((f) => ELECTRON_IMPORT.test(read(f)))).toBe(true);
  });

  it('the renderer imports nothing from main but contract types', () => {
    const bad: string[] = [];
    for (const f of files('renderer/src')) {
      for (const m of read(f).matchAll(/^\s*import\s+(type\s+)?[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
        const [, typeOnly, spec] = m;
        if (spec!.includes('/main/') && !(typeOnly && spec!.endsWith('api/contract')) && !spec!.endsWith('api/ui-methods')) bad.push(`${f}: ${m[0].trim()}`);
      }
      if (/dangerouslySetInnerHTML|\.innerHTML\s*=/.test(read(f))) bad.push(`${f}: innerHTML`);
    }
    expect(bad).toEqual([]);
  });

  it('the preload exposes named methods and bundles no schema library', () => {
    const src = files('preload').map(read).join('\n');
    expect(src).toMatch(/contextBridge\.exposeInMainWorld/);
    expect(src).not.toMatch(/from\s+['"]zod['"]/);
    expect(src).not.toMatch(/\b(on|send|invoke)\s*:\s*\(\s*channel/);
  });
});
