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

/** Every relative module a file names (imports, re-exports, dynamic and type imports), resolved to a repository path. */
function importsOf(file: string, text = read(file)): string[] {
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specs.map((spec) => path.normalize(path.join(path.dirname(file), spec)));
}

/** The top-level part of main/ a path is in: `session`, `api`, `host.ts`, … */
const areaOf = (p: string) => (p.startsWith(`main${path.sep}`) ? p.split(path.sep)[1]!.replace(/\.ts$/, '') : p.split(path.sep)[0]!);

/**
 * Doors open one way (docs/architecture.md): api and shell sit on top; brain, hands, catalog and
 * session below them; the session log (and the shared db helpers) at the bottom.
 */
const MAY_NOT_IMPORT: Record<string, string[]> = {
  session: ['catalog', 'hands', 'brain', 'api', 'shell', 'host', 'vault'],
  catalog: ['session', 'hands', 'brain', 'api', 'shell', 'host', 'vault'],
  db: ['session', 'catalog', 'hands', 'brain', 'api', 'shell', 'host', 'vault'],
  hands: ['brain', 'api', 'shell', 'host'],
  brain: ['api', 'shell', 'host'],
  vault: ['brain', 'api', 'shell', 'host'],
  mcp: ['brain', 'api', 'shell', 'host'],
  host: ['api', 'shell'],
  logging: ['catalog', 'hands', 'brain', 'api', 'shell', 'host', 'vault'],
  launcher: ['session', 'catalog', 'hands', 'brain', 'api', 'shell', 'host', 'mcp'],
};

/** Imports that break MAY_NOT_IMPORT, as `file -> target`. */
function upwardImports(sources: Record<string, string>): string[] {
  const bad: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    const forbidden = MAY_NOT_IMPORT[areaOf(file)] ?? [];
    for (const target of importsOf(file, text)) if (forbidden.includes(areaOf(target))) bad.push(`${file} -> ${target}`);
  }
  return bad;
}

describe('rules of the house', () => {
  it('doors open one way: nothing imports api or shell from below, and the log imports none of the others', () => {
    const sources = Object.fromEntries(files('main').map((f) => [f, read(f)]));
    expect(upwardImports(sources)).toEqual([]);
    // The rule is live: a planted upward import is caught.
    const planted = { [path.join('main', 'session', 'planted.ts')]: "import { ApiError } from '../api/http/errors';\nimport type { Host } from '../host';" };
    expect(upwardImports(planted)).toEqual([`${path.join('main', 'session', 'planted.ts')} -> ${path.join('main', 'api', 'http', 'errors')}`, `${path.join('main', 'session', 'planted.ts')} -> ${path.join('main', 'host')}`]);
    expect(upwardImports({ [path.join('main', 'brain', 'x.ts')]: "export * from '../shell/ipc';" })).toHaveLength(1);
    expect(upwardImports({ [path.join('main', 'hands', 'x.ts')]: "const m = await import('../api/ui/service');" })).toHaveLength(1);
  });

  it('SQL lives in the session log, the catalog\'s and the vault\'s stores only', () => {
    const sql = /\.prepare\(|\.exec\(\s*['"`]\s*(SELECT|INSERT|UPDATE|DELETE|CREATE)/;
    const offenders = files('main').filter((f) => !['session', 'catalog', 'db', 'vault'].includes(areaOf(f)) && sql.test(read(f)));
    expect(offenders).toEqual([]);
  });

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
        const allowed = (typeOnly && spec!.endsWith('api/ui/contract')) || spec!.endsWith('api/ui/methods') || spec!.endsWith('api/ui/bind');
        if (spec!.includes('/main/') && !allowed) bad.push(`${f}: ${m[0].trim()}`);
      }
      if (/dangerouslySetInnerHTML|\.innerHTML\s*=/.test(read(f))) bad.push(`${f}: innerHTML`);
    }
    expect(bad).toEqual([]);
  });

  it('the dependency-free UI modules the renderer and preload bundle import only types of the contract', () => {
    for (const f of ['main/api/ui/methods.ts', 'main/api/ui/bind.ts']) {
      for (const m of read(f).matchAll(/^\s*import\s+(type\s+)?[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
        expect(m[1] !== undefined || m[2] === './methods', `${f}: ${m[0]}`).toBe(true);
      }
    }
  });

  it('the preload exposes named methods and bundles no schema library', () => {
    const src = files('preload').map(read).join('\n');
    expect(src).toMatch(/contextBridge\.exposeInMainWorld/);
    expect(src).not.toMatch(/from\s+['"]zod['"]/);
    expect(src).not.toMatch(/\b(on|send|invoke)\s*:\s*\(\s*channel/);
  });
});
