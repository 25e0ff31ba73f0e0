/**
 * Shared setup of the SSH hand tests (test/hands/ssh-*.test.ts) against the real OpenSSH daemons of
 * test/hands-env/ssh.sh: connection helpers, remote-side checks through the system ssh client, and
 * useSshBackend(), which registers the hooks.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { EnvironmentConfigParam } from '../../main/api/http/schemas/environments';
import { sshHandKind, SshConnectError, type SshConfig, type SshConnectOptions, type SshShell } from '../../main/hands/ssh';
import { tmpDir } from './tmp';
import { backendTurn } from './hands-env';

// The API's `ssh` environment config is what the kind takes.
export type ApiSshConfig = Extract<EnvironmentConfigParam, { type: 'ssh' }>;
export const asKindConfig = (c: ApiSshConfig): SshConfig => c;

export const root = path.resolve(__dirname, '../..');
export const SCRIPT = path.join(root, 'test/hands-env/ssh.sh');
export const ENV_FILE = '/tmp/corral-hands/ssh.env';

export let env: Record<string, string>;
export let scratch: string;
/** An empty known_hosts file: the tests never depend on (or write) the real ~/.ssh. */
export let noKnownHosts: string;
export const opened: SshShell[] = [];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const envScript = (...args: string[]) => execFileSync('bash', [SCRIPT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

export function loopConfig(extra: Partial<SshConfig> = {}): SshConfig {
  return asKindConfig({ type: 'ssh', host: env.CORRAL_TEST_SSH_HOST!, port: Number(env.CORRAL_TEST_SSH_PORT), user: env.CORRAL_TEST_SSH_USER!, identity_file: env.CORRAL_TEST_SSH_KEY!, ...extra } as ApiSshConfig);
}
/** CORRAL_TEST_SSH_NO_NS=1 runs the loopback fallbacks even where the namespace host exists. */
export const hasNs = () => !process.env.CORRAL_TEST_SSH_NO_NS && Boolean(env.CORRAL_TEST_SSH_NS_HOST);
export function nsConfig(): SshConfig {
  return { host: env.CORRAL_TEST_SSH_NS_HOST!, port: Number(env.CORRAL_TEST_SSH_NS_PORT), user: env.CORRAL_TEST_SSH_USER!, identity_file: env.CORRAL_TEST_SSH_KEY! };
}

export async function connect(config: SshConfig, opts: Omit<SshConnectOptions, 'signal'> = {}): Promise<SshShell> {
  const shell = await sshHandKind.connect(config, { label: 'test', knownHostsFiles: [noKnownHosts], agent: false, ...opts });
  opened.push(shell);
  return shell;
}

/** Runs a command on a test host through the system ssh client (a separate connection). */
export function remote(command: string, host = env.CORRAL_TEST_SSH_HOST!, port = env.CORRAL_TEST_SSH_PORT!): string {
  return execFileSync(
    'ssh',
    ['-i', env.CORRAL_TEST_SSH_KEY!, '-p', port, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', `${env.CORRAL_TEST_SSH_USER}@${host}`, command],
    { encoding: 'utf8', timeout: 15_000 },
  );
}

/** Processes of the test user on the loopback host: pid, pgid, args. */
/**
 * The test user's live processes on the host. Zombies are left out: they have exited and hold
 * nothing; a killed command's orphans are reaped by the machine's pid 1, which on some machines
 * (CI's VM init among them) takes its time.
 */
export function remoteProcesses(): { pid: number; pgid: number; args: string }[] {
  return remote('ps -u corral-test -o pid=,pgid=,stat=,args=')
    .split('\n')
    .filter(Boolean)
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(l)!)
    .filter((m) => !m[3]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m[1]), pgid: Number(m[2]), args: m[4]! }));
}

export async function collect(shell: SshShell, command: string, opts: { stdin?: Buffer; cwd?: string } = {}) {
  const out = { stdout: '', stderr: '' };
  const r = await shell.exec(command, { ...opts, onOutput: (c, s) => (out[s] += c.toString('utf8')) });
  return { ...r, ...out };
}

export function fingerprintOfPubFile(file: string): string {
  const b64 = fs.readFileSync(file, 'utf8').trim().split(/\s+/)[1]!;
  return `SHA256:${createHash('sha256').update(Buffer.from(b64, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

/** A port on 127.0.0.1 that nothing listens on. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export async function rejection(p: Promise<unknown>): Promise<SshConnectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SshConnectError);
    return err as SshConnectError;
  }
  throw new Error('expected the connect to fail');
}

let releaseTurn: (() => void) | undefined;

/**
 * Registers the hooks every SSH backend test file needs: a turn on the shared backend (the
 * files kill, freeze and cut the hosts), its variables, an empty known_hosts file, and closing
 * the shells a test opened.
 */
export function useSshBackend(): void {
  beforeAll(async () => {
    // These files kill, freeze and cut the hosts: other files' SSH sessions wait their turn.
    releaseTurn = await backendTurn('ssh');
    envScript('start');
    env = {};
    for (const m of fs.readFileSync(ENV_FILE, 'utf8').matchAll(/^export (\w+)='?([^'\n]*)'?$/gm)) env[m[1]!] = m[2]!;
    expect(env.CORRAL_TEST_SSH_HOST).toBe('127.0.0.1');
    if (!hasNs()) console.warn(`ssh tests: no namespace host (${env.CORRAL_TEST_SSH_NS_ERROR}); dead host and cut link are simulated on the loopback daemon`);
    scratch = tmpDir('corral-ssh-test-');
    noKnownHosts = path.join(scratch, 'known_hosts_empty');
    fs.writeFileSync(noKnownHosts, '');
  }, 180_000);

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  afterAll(() => {
    if (env && hasNs()) {
      try {
        envScript('link-up');
      } catch {
        // best effort
      }
    }
    releaseTurn?.();
  });
}
