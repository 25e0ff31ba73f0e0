import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';
import { readServeState } from '../../main/cli/serve-state';

const root = path.resolve(__dirname, '../..');
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

function serve(dataDir: string, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<string[]> {
  const { CORRAL_API_KEY: _drop, ...base } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir, ...args], {
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

/** Runs `serve ARGS` to its end: exit code, stdout, stderr. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const { CORRAL_API_KEY: _drop, ...base } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), ...args], { cwd: root, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.once('close', r)); // 'close': output read to its end
  return { code, out, err };
}

const linkOf = (lines: string[]) => lines.find((l) => l.includes('open http'))!.split('open ')[1]!.split(' ')[0]!;

// Each test starts serve and CLI runs as Node processes under tsx: 30 s each on a busy 2-core machine.
describe('npm run serve', { timeout: 120_000 }, () => {
  it('makes a key at first start (mode 0600), keeps it, and prints a one-time link that never carries it', async () => {
    const dataDir = tmpDir();
    const lines = await serve(dataDir);
    const keyFile = path.join(dataDir, 'api-key');
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).not.toContain(key);
    expect(lines.join('\n')).toContain(`API key in ${keyFile}`);
    const link = linkOf(lines);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?code=[\w-]+$/);
    const base = new URL(link).origin;
    expect((await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await fetch(`${base}/v1/agents`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    // The link sets the cookie and sends the page to an address without the code; once.
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    expect(res.headers.get('set-cookie')).toMatch(/__Host-corral_ui=.*HttpOnly.*SameSite=Strict/i);
    expect(res.headers.get('set-cookie')).not.toContain(key);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);

    // `serve link` gets a fresh link from the running serve; `rotate-key` replaces the key through it.
    const fresh = await run(['link', '--data', dataDir]);
    expect(fresh.code).toBe(0);
    const freshLink = /open (\S+)/.exec(fresh.out)![1]!;
    expect(freshLink).not.toBe(link);
    expect(fresh.out).not.toContain(key);
    const cookie = (await fetch(freshLink, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
    const unused = /open (\S+)/.exec((await run(['link', '--data', dataDir])).out)![1]!;
    const rotated = await run(['rotate-key', '--data', dataDir]);
    expect(rotated.code).toBe(0);
    const newKey = fs.readFileSync(keyFile, 'utf8').trim();
    expect(newKey).not.toBe(key);
    expect(rotated.out).not.toContain(newKey);
    expect((await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': key } })).status).toBe(401);
    expect((await fetch(`${base}/v1/agents`, { headers: { 'x-api-key': newKey } })).status).toBe(200);
    expect((await fetch(unused, { redirect: 'manual' })).status).toBe(401);
    expect(cookie).toMatch(/^__Host-corral_ui=/);

    children.pop()!.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 0));
    // A second start keeps the (rotated) key.
    const again = await serve(dataDir);
    expect((await fetch(`${new URL(linkOf(again)).origin}/v1/agents`, { headers: { 'x-api-key': newKey } })).status).toBe(200);
    children.pop()!.kill('SIGTERM');
  });

  it('rotates the key without a running serve, and says there is none to link', async () => {
    const dataDir = tmpDir();
    const rotated = await run(['rotate-key', '--data', dataDir]);
    expect(rotated.code).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim()).toMatch(/^corral-[\w-]{43}$/);
    const link = await run(['link', '--data', dataDir]);
    expect(link.code).toBe(1);
    expect(link.err).toMatch(/no serve is running/);
  });

  it('uses CORRAL_API_KEY when set, and refuses a short one, bad arguments and an open host without allowed hosts', async () => {
    const envKey = 'from-env-0123456789-0123456789-0123456789';
    const lines = await serve(tmpDir(), { CORRAL_API_KEY: envKey });
    expect(lines.join('\n')).toContain('from CORRAL_API_KEY');
    expect(lines.join('\n')).not.toContain(envKey);
    expect((await fetch(`${new URL(linkOf(lines)).origin}/v1/agents`, { headers: { 'x-api-key': envKey } })).status).toBe(200);

    const short = await run(['--port', '0', '--data', tmpDir()], { CORRAL_API_KEY: 'a' });
    expect(short.code).toBe(2);
    expect(short.err.trim().split('\n')).toHaveLength(1);
    expect(short.err).toMatch(/CORRAL_API_KEY is too short \(1 characters; at least 32/);

    const open = await run(['--port', '0', '--data', tmpDir(), '--host', '0.0.0.0']);
    expect(open.code).toBe(2);
    expect(open.err).toMatch(/--allowed-hosts/);
    const bad = await run(['--port', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--port must be/);
  });

  it('listens beyond loopback with allowed hosts, and answers only those names', async () => {
    const dataDir = tmpDir();
    const lines = await serve(dataDir, {}, ['--host', '0.0.0.0', '--allowed-hosts', 'corral.test,127.0.0.1']);
    const port = Number(/:(\d+)\//.exec(linkOf(lines))![1]);
    const key = fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim();
    expect((await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) =>
        http.get({ host: '127.0.0.1', port, path: '/v1/agents', headers: { host, 'x-api-key': key } }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject),
      );
    expect(await status(`corral.test:${port}`)).toBe(200);
    expect(await status(`evil.example:${port}`)).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(403);
    expect(readServeState(dataDir)?.url).toContain(String(port));
  });
});
