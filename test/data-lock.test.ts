import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir, lockFileOf } from '../main/data-lock';
import { createHost } from '../main/host';
import { tmpDir } from './helpers/tmp';

const root = path.resolve(__dirname, '..');

describe('one host per data folder', () => {
  it('refuses a second host in this process, and frees the folder on close', async () => {
    const dataDir = tmpDir();
    const first = createHost({ dataDir, what: 'the first host' });
    expect(() => createHost({ dataDir })).toThrow(DataDirInUseError);
    await first.close();
    expect(fs.existsSync(lockFileOf(dataDir))).toBe(false);
    const second = createHost({ dataDir });
    await second.close();
  });

  it('refuses serve on a folder another live process holds, naming it; takes over one left by a dead process', async () => {
    const dataDir = tmpDir();
    const release = lockDataDir(dataDir, 'the Corral desktop app');
    const serve = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    serve.stderr!.on('data', (d) => (err += d));
    const code = await new Promise((r) => serve.once('close', r));
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`in use by the Corral desktop app \\(pid ${process.pid}, since `));
    expect(err).toMatch(/--data DIR or CORRAL_DATA/);
    release();

    // A lock whose process is gone (kill -9, a crash): taken over.
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.once('close', r));
    fs.writeFileSync(lockFileOf(dataDir), JSON.stringify({ pid: dead.pid, what: 'a crashed host', started_at: 'earlier' }));
    const host = createHost({ dataDir, what: 'me' });
    expect(JSON.parse(fs.readFileSync(lockFileOf(dataDir), 'utf8'))).toMatchObject({ pid: process.pid, what: 'me' });
    await host.close();
  });
});
