import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

/** The environment of a clean start: none of the variables under test. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['CORRAL_API_KEY', 'CORRAL_DATA', 'CORRAL_PORT', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL']) delete env[k];
  return { ...env, ...extra };
}

/** Runs `serve` with arguments until it exits; its output and exit code. */
function runServe(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  // 'close': both pipes read to their end.
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Environment variables the code under main/ reads. */
function envVarsReadInMain(): string[] {
  const found = new Set<string>();
  for (const f of fs.readdirSync(path.join(root, 'main'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(root, 'main', f), 'utf8');
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) found.add(m[1]!);
  }
  return [...found];
}
/** Read by the OS-level defaults or by the desktop app only; not `serve` settings. */
// CORRAL_BRAIN_WIRE is set by the brain launcher for the brains it starts (brain-wire.ts), not by a user.
const NOT_SERVE_SETTINGS = ['HOME', 'USER', 'APPDATA', 'ELECTRON_RUN_AS_NODE', 'ELECTRON_RENDERER_URL', 'CORRAL_SQLITE_BINDING', 'CORRAL_BRAIN_WIRE'];

describe('serve --help and --version', () => {
  it('lists every flag and every environment variable the host reads, with defaults, and exits 0', async () => {
    const { code, stdout } = await runServe(['--help']);
    expect(code).toBe(0);
    for (const flag of ['--port', '--data', '--host', '--help', '--version']) expect(stdout).toContain(flag);
    const vars = envVarsReadInMain().filter((v) => !NOT_SERVE_SETTINGS.includes(v));
    expect(vars).toContain('CORRAL_BRAIN_LINGER_MS'); // the scan finds them
    for (const v of vars) expect(stdout, v).toMatch(new RegExp(`^  ${v} .*\\[default: [^\\]]+\\]$`, 'm'));
    expect(stdout).toMatch(/^ {2}CORRAL_MODEL_RETRIES .*\[default: 4\]$/m);
  });

  it('prints the version', async () => {
    const { code, stdout } = await runServe(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);
  });
});

describe('serve refuses to start with one line, and leaves nothing behind', () => {
  it("refuses --data '' and a data path that is a file", async () => {
    const file = path.join(tmpDir(), 'not-a-folder');
    fs.writeFileSync(file, 'mine');
    const [empty, isFile, underFile] = await Promise.all([
      runServe(['--data', '', '--port', '0']),
      runServe(['--data', file, '--port', '0']),
      runServe(['--data', path.join(file, 'data'), '--port', '0']),
    ]);
    for (const r of [empty, isFile, underFile]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(empty.stderr).toMatch(/^corral serve: --data is empty: give it a folder/);
    expect(isFile.stderr).toMatch(/is a file, not a folder: give --data \(or CORRAL_DATA\) a folder/);
    expect(underFile.stderr).toMatch(/cannot be made: .*not-a-folder is a file/);
    expect(fs.readFileSync(file, 'utf8')).toBe('mine');
  });

  it('refuses a port in use before it creates or locks the data folder', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = path.join(tmpDir(), 'data');
    try {
      const r = await runServe(['--data', dataDir, '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([`corral serve: port ${port} on 127.0.0.1 is in use (another corral serve?): stop that, or choose another port with --port P or CORRAL_PORT`]);
      expect(fs.existsSync(dataDir)).toBe(false);
      // A folder that exists is not locked or written either.
      fs.mkdirSync(dataDir);
      expect((await runServe(['--data', dataDir, '--port', String(port)])).code).toBe(1);
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      blocker.close();
    }
  });
});

describe('serve at start', () => {
  it('names the model endpoint and key source (never their secrets), warns without a key, and logs requests to stderr and the file', async () => {
    const dataDir = tmpDir();
    const env = cleanEnv({ ANTHROPIC_BASE_URL: 'http://user:pw-123@127.0.0.1:9/v1?k=q-456', ANTHROPIC_API_KEY: 'sk-planted-789' });
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        stdout += d;
        const m = /open (http:\/\/[^/]+)\//.exec(stdout);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stdout}${stderr}`)));
    });
    expect(stdout).toContain('model at http://127.0.0.1:9/v1 (from ANTHROPIC_BASE_URL)');
    expect(stdout).toContain('model key: ANTHROPIC_API_KEY from the environment');
    expect((await fetch(`${url}/health`)).status).toBe(200);
    await new Promise<void>((resolve) => {
      const poll = () => (stderr.includes('path=/health status=200') ? resolve() : setTimeout(poll, 20));
      poll();
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
    const file = fs.readFileSync(path.join(dataDir, 'logs', 'corral.log'), 'utf8');
    expect(file).toMatch(/"method":"GET","path":"\/health","status":200/);
    for (const secret of ['pw-123', 'q-456', 'sk-planted-789', fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim()]) {
      expect(file).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
    expect(stdout).not.toMatch(/pw-123|q-456|sk-planted-789/);

    // Without a model key: a warning that says what to set.
    const bare = await new Promise<string>((resolve) => {
      const c = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', tmpDir()], { cwd: root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(c);
      let err = '';
      c.stderr!.on('data', (d) => {
        err += d;
        if (err.includes('no model API key')) {
          c.kill('SIGTERM');
          resolve(err);
        }
      });
    });
    expect(bare).toMatch(/warning: no model API key: set ANTHROPIC_API_KEY/);
  });
});
