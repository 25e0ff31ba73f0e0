/**
 * A private real adb server and test devices of our own (test/fixtures/adb-device-main.ts), for
 * the reverse-forwarding tests. Not the shared backend of test/hands-env/adb.sh: those tests kill
 * the shared server and devices, and a mistake in reverse forwarding makes a real adb server kill
 * itself (LOG(FATAL) on a device's connect it has no record of; main/hands/adb/reverse.ts), which
 * must not take other files' devices with it. Everything here is started by the caller and
 * stopped by `close()`, by process id.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { tmpDir } from './tmp';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PrivateDevice {
  serial: string;
  /** The device's root on this machine (its commands run here, not in a chroot). */
  root: string;
  /** A work folder on the device (an absolute path of this machine). */
  workDir: string;
}

export interface PrivateAdb {
  port: number;
  /** The adb CLI against this server (never starts a server of its own: the server is up). */
  cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Starts a device daemon on `port` and connects the server to it. */
  device(port: number, extra?: string[]): Promise<PrivateDevice>;
  /** The server's process is alive (a real server that saw a disallowed connect is not). */
  alive(): boolean;
  close(): Promise<void>;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

export async function startPrivateAdb(port: number): Promise<PrivateAdb> {
  if (await portOpen(port)) throw new Error(`port ${port} is taken: cannot start a private adb server there`);
  const home = tmpDir('corral-adbrev-home-');
  const env = { ...process.env, HOME: home, ANDROID_ADB_SERVER_PORT: String(port) };
  const children: ChildProcess[] = [];
  // A test process that ends without close() must not leave a server holding the port for the next run.
  const killAll = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
  process.once('exit', killAll);
  const server = spawn('adb', ['-P', String(port), 'nodaemon', 'server'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(server);
  let serverLog = '';
  server.stderr!.on('data', (c: Buffer) => (serverLog = (serverLog + c.toString()).slice(-20_000)));
  for (let i = 0; !(await portOpen(port)); i++) {
    if (server.exitCode !== null || i > 100) throw new Error(`the private adb server did not start: ${serverLog}`);
    await sleep(100);
  }
  const cli: PrivateAdb['cli'] = async (args) => {
    // The CLI starts a server of its own when none answers: never let it (a dead server stays dead).
    if (server.exitCode !== null || server.signalCode !== null) return { code: 1, stdout: '', stderr: 'the private adb server is gone' };
    try {
      const r = await run('adb', ['-P', String(port), ...args], { env, timeout: 20_000 });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    }
  };
  return {
    port,
    cli,
    alive: () => server.exitCode === null && server.signalCode === null,
    async device(devPort, extra = []) {
      const devRoot = tmpDir(`corral-adbrev-dev${devPort}-`);
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/adb-device-main.ts', '--port', String(devPort), '--root', devRoot, '--model', `Rev${devPort}`, ...extra], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      child.stderr!.on('data', () => {});
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
        child.once('exit', (code) => reject(new Error(`the device daemon on ${devPort} exited (${code})`)));
      });
      const serial = `127.0.0.1:${devPort}`;
      for (let i = 0; ; i++) {
        if (i % 10 === 0) await cli(['connect', serial]);
        if ((await cli(['-s', serial, 'get-state'])).stdout.trim() === 'device') break;
        if (i > 60) throw new Error(`device ${serial} did not come online on the private adb server`);
        await sleep(100);
      }
      const workDir = path.join(devRoot, 'data/local/tmp/corral');
      fs.mkdirSync(workDir, { recursive: true });
      return { serial, root: devRoot, workDir };
    },
    async close() {
      process.removeListener('exit', killAll);
      for (const c of children.reverse()) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await Promise.race([gone, sleep(3_000)]);
        if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      }
    },
  };
}
