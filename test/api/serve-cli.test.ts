import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

function serve(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const { CORRAL_API_KEY: _drop, ...base } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], {
    cwd: root,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push(l);
      if (l.includes('open http')) resolve(lines);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${lines.join('\n')}`)));
  });
}

describe('npm run serve', () => {
  it('makes a key at first start (mode 0600), keeps it, and prints a link that carries it once', async () => {
    const dataDir = tmpDir();
    const lines = await serve(dataDir);
    const keyFile = path.join(dataDir, 'api-key');
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const link = lines.find((l) => l.includes('open http'))!.split('open ')[1]!;
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    expect(new URL(link).searchParams.get('token')).toBe(key);
    const base = new URL(link).origin;
    expect((await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await fetch(`${base}/v1/agents`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    // The link sets the cookie and sends the page to an address without the key.
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    expect(res.headers.get('set-cookie')).toMatch(/corral_ui=.*HttpOnly.*SameSite=Strict/i);
    expect(res.headers.get('set-cookie')).not.toContain(key);
    children.pop()!.kill('SIGTERM');
    // A second start keeps the same key.
    const again = await serve(dataDir);
    expect(again.find((l) => l.includes('open http'))).toContain(encodeURIComponent(key));
  });

  it('uses CORRAL_API_KEY when set and refuses bad arguments clearly', async () => {
    const lines = await serve(tmpDir(), { CORRAL_API_KEY: 'from-env-123' });
    expect(lines.join('\n')).toContain('from CORRAL_API_KEY');
    expect(lines.find((l) => l.includes('open http'))).toContain('token=from-env-123');
    const bad = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', 'nope'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    bad.stderr!.on('data', (d) => (err += d));
    const code = await new Promise((r) => bad.once('close', r)); // 'close': stderr read to its end
    expect(code).toBe(2);
    expect(err).toMatch(/--port must be/);
  });
});
