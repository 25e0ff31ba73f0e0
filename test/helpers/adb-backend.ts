/**
 * Shared setup of the adb hand tests (test/hands/adb-*.test.ts): the REAL adb server (a private one
 * on port 15037) and test devices of our own (test/fixtures/adb-device.ts), all started by
 * test/hands-env/adb.sh. Device 1 (6555) serves most tests; device 2 (6556) is killed and revived
 * by the death test.
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect } from 'vitest';
import { adbHandKind, AdbShell, type AdbConfig } from '../../main/hands/adb';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import type { RemoteShell } from '../../main/hands/remote/types';
import type { Hand } from '../../main/hands/types';
import { backendTurn } from './hands-env';

export const root = path.resolve(__dirname, '../..');
export const script = path.join(root, 'test/hands-env/adb.sh');
export let env: Record<string, string>;
export let serverPort: number;
export let serial: string;
export let serial2: string;
/** The test work folder as the device sees it, and as this machine sees it. */
export let workDir: string;
export let hostWorkDir: string;
export let config: AdbConfig;
export let shell: AdbShell;
export let hand: Hand;
export const opened: RemoteShell[] = [];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function connect(extra: Partial<AdbConfig> = {}): Promise<AdbShell> {
  const s = (await adbHandKind.connect({ ...config, ...extra }, { label: 'adb-test' })) as AdbShell;
  opened.push(s);
  return s;
}

/** Runs a command on a raw shell and returns its output. */
export async function run(s: RemoteShell, command: string, opts: { stdin?: Buffer; cwd?: string; signal?: AbortSignal } = {}) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const res = await s.exec(command, { ...opts, onOutput: (c, st) => (st === 'stdout' ? out : err).push(c) });
  return { ...res, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

/** The adb CLI against the private server. */
export function adbCli(args: string[], input?: Buffer) {
  return spawnSync('adb', ['-P', String(serverPort), ...args], { env: { ...process.env, HOME: '/tmp/corral-hands/adb/home' }, input, timeout: 20_000 });
}

/** Live (non-zombie) processes whose command line matches, seen with the device's own ps. */
export async function deviceProcesses(s: RemoteShell, args: RegExp): Promise<string[]> {
  const ps = await run(s, 'ps -eo stat=,args=');
  expect(ps.exitCode).toBe(0);
  expect(ps.stdout).toMatch(/ps -eo/); // ps did list processes
  return ps.stdout
    .split('\n')
    .map((l) => /^\s*(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !m[1]!.startsWith('Z') && !m[2]!.includes('ps -eo') && args.test(m[2]!))
    .map((m) => m[2]!);
}

/** A number no other process here has in its command line. */
export const uniqueToken = () => String(100_000 + Math.floor(Math.random() * 899_999));

/**
 * A process line of a test's own command with this token: its `sleep N.<token>` or the shell that
 * runs it (`…; touch marker-<token>`). The bare token is not enough: six digits also turn up in
 * other processes' arguments on a busy device (a socket name in hex).
 */
export const ownCommand = (token: string) => new RegExp(`(?:sleep \\d+\\.|marker-)${token}(?!\\d)`);

/** A strict PNG decoder for RGB/8-bit images: checks the signature and every CRC, inflates the pixels. */
export function decodePng(buf: Buffer): { width: number; height: number; pixels: Buffer } {
  expect(buf.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let pos = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  const types: string[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    expect(buf.readUInt32BE(pos + 8 + len), `CRC of ${type}`).toBe(zlib.crc32(buf.subarray(pos + 4, pos + 8 + len)));
    types.push(type);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect([data[8], data[9]]).toEqual([8, 2]); // 8-bit RGB
    }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  expect(types[0]).toBe('IHDR');
  expect(types.at(-1)).toBe('IEND');
  const raw = zlib.inflateSync(Buffer.concat(idat));
  expect(raw.length).toBe(height * (1 + width * 3));
  const pixels = Buffer.concat(Array.from({ length: height }, (_, y) => {
    const row = raw.subarray(y * (1 + width * 3), (y + 1) * (1 + width * 3));
    expect(row[0]).toBe(0); // filter: none
    return row.subarray(1);
  }));
  return { width, height, pixels };
}


let releaseTurn: (() => void) | undefined;

/**
 * Registers the hooks of every adb hand test file: a turn on the shared backend, its variables,
 * and a connected shell and hand on device 1; closes every shell opened at the end.
 */
export function useAdbBackend(): void {
  beforeAll(async () => {
    // These files kill and revive the devices and the server: the other adb tests wait their turn.
    releaseTurn = await backendTurn('adb');
    const out = execFileSync('bash', [script, 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
    env = Object.fromEntries([...out.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    serverPort = Number(env.ANDROID_ADB_SERVER_PORT);
    serial = env.CORRAL_TEST_ADB_SERIAL!;
    serial2 = env.CORRAL_TEST_ADB_SERIAL2!;
    workDir = env.CORRAL_TEST_ADB_WORKDIR!;
    hostWorkDir = env.CORRAL_TEST_ADB_HOST_WORKDIR!;
    expect(serverPort).toBe(15037);
    // The hand finds the private server through the variable adb itself reads.
    process.env.ANDROID_ADB_SERVER_PORT = String(serverPort);
    fs.rmSync(hostWorkDir, { recursive: true, force: true });
    config = { type: 'adb', serial, working_dir: workDir };
    shell = await connect();
    hand = createShellHand(shell, { workDir, label: 'adb-test' });
  }, 300_000);

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    releaseTurn?.();
  });
}
