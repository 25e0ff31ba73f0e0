import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A repository of realistic shape for bench:ttft: `files` source-like files of about 1–3 KB in
 * nested folders, committed over `commits` commits that each touch a tenth of them (some
 * history). Made once per run, in `dir`; returns a file:// URL, so a clone goes through git's
 * transport (packing) as a remote clone would, not a local clone's hard links.
 */
export function makeRepo(dir: string, files: number, commits: number): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=bench', '-c', 'user.email=bench@corral.invalid', ...args], { stdio: 'ignore' });
  fs.mkdirSync(dir, { recursive: true });
  git('init', '--quiet', '--initial-branch=main');
  const body = (i: number, rev: number) => `// module ${i}, revision ${rev}\n` + `export const value${i} = ${i * 7 + rev};\n`.repeat(30 + (i % 60));
  const fileOf = (i: number) => path.join(dir, `src/pkg${i % 40}/mod${Math.floor(i / 40) % 25}/file${i}.ts`);
  for (let c = 0; c < commits; c++) {
    for (let i = 0; i < files; i++) {
      if (c > 0 && (i + c) % 10 !== 0) continue;
      fs.mkdirSync(path.dirname(fileOf(i)), { recursive: true });
      fs.writeFileSync(fileOf(i), body(i, c));
    }
    git('add', '-A');
    git('commit', '--quiet', '-m', `change ${c}`);
  }
  return `file://${dir}`;
}
