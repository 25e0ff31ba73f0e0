/**
 * The SSH hand against real OpenSSH daemons (test/hands-env/ssh.sh, run as root): one on
 * 127.0.0.1:2222 and one inside network namespace corral-ns1 that these tests kill and cut off.
 * Remote-side checks go through the system `ssh` client, a separate connection and a separate
 * implementation. Where `ip netns` is not permitted the script says so in the env file and the
 * dead-host and cut-link tests use the loopback daemon instead: its per-connection processes are
 * killed (SIGKILL) or frozen (SIGSTOP). CORRAL_TEST_SSH_NO_NS=1 forces that path.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EnvironmentConfigParam } from '../../main/api/http/schemas/environments';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { RemoteFileError } from '../../main/hands/remote/types';
import { connectSsh, listSshConfigHosts, sshHandKind, SshConnectError, type SshConfig, type SshConnectOptions, type SshShell } from '../../main/hands/ssh';
import { tmpDir } from '../helpers/tmp';
import { backendTurn } from '../helpers/hands-env';

// The API's `ssh` environment config is what the kind takes.
type ApiSshConfig = Extract<EnvironmentConfigParam, { type: 'ssh' }>;
const asKindConfig = (c: ApiSshConfig): SshConfig => c;

const root = path.resolve(__dirname, '../..');
const SCRIPT = path.join(root, 'test/hands-env/ssh.sh');
const ENV_FILE = '/tmp/corral-hands/ssh.env';

let env: Record<string, string>;
let scratch: string;
/** An empty known_hosts file: the tests never depend on (or write) the real ~/.ssh. */
let noKnownHosts: string;
const opened: SshShell[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const envScript = (...args: string[]) => execFileSync('bash', [SCRIPT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

function loopConfig(extra: Partial<SshConfig> = {}): SshConfig {
  return asKindConfig({ type: 'ssh', host: env.CORRAL_TEST_SSH_HOST!, port: Number(env.CORRAL_TEST_SSH_PORT), user: env.CORRAL_TEST_SSH_USER!, identity_file: env.CORRAL_TEST_SSH_KEY!, ...extra } as ApiSshConfig);
}
/** CORRAL_TEST_SSH_NO_NS=1 runs the loopback fallbacks even where the namespace host exists. */
const hasNs = () => !process.env.CORRAL_TEST_SSH_NO_NS && Boolean(env.CORRAL_TEST_SSH_NS_HOST);
function nsConfig(): SshConfig {
  return { host: env.CORRAL_TEST_SSH_NS_HOST!, port: Number(env.CORRAL_TEST_SSH_NS_PORT), user: env.CORRAL_TEST_SSH_USER!, identity_file: env.CORRAL_TEST_SSH_KEY! };
}

async function connect(config: SshConfig, opts: Omit<SshConnectOptions, 'signal'> = {}): Promise<SshShell> {
  const shell = await sshHandKind.connect(config, { label: 'test', knownHostsFiles: [noKnownHosts], agent: false, ...opts });
  opened.push(shell);
  return shell;
}

/** Runs a command on a test host through the system ssh client (a separate connection). */
function remote(command: string, host = env.CORRAL_TEST_SSH_HOST!, port = env.CORRAL_TEST_SSH_PORT!): string {
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
function remoteProcesses(): { pid: number; pgid: number; args: string }[] {
  return remote('ps -u corral-test -o pid=,pgid=,stat=,args=')
    .split('\n')
    .filter(Boolean)
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(l)!)
    .filter((m) => !m[3]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m[1]), pgid: Number(m[2]), args: m[4]! }));
}

async function collect(shell: SshShell, command: string, opts: { stdin?: Buffer; cwd?: string } = {}) {
  const out = { stdout: '', stderr: '' };
  const r = await shell.exec(command, { ...opts, onOutput: (c, s) => (out[s] += c.toString('utf8')) });
  return { ...r, ...out };
}

function fingerprintOfPubFile(file: string): string {
  const b64 = fs.readFileSync(file, 'utf8').trim().split(/\s+/)[1]!;
  return `SHA256:${createHash('sha256').update(Buffer.from(b64, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

/** A port on 127.0.0.1 that nothing listens on. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function rejection(p: Promise<unknown>): Promise<SshConnectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SshConnectError);
    return err as SshConnectError;
  }
  throw new Error('expected the connect to fail');
}

let releaseTurn: (() => void) | undefined;
beforeAll(async () => {
  // This file kills, freezes and cuts the hosts: other files' SSH sessions wait their turn.
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

describe('the SSH hand kind', () => {
  it('connects, reports the host key it accepted unseen, and makes <home>/corral-work', async () => {
    const config = loopConfig();
    const shell = await connect(config);
    expect(shell.hostKey).toMatchObject({ type: 'ssh-ed25519', known: false, knownHostsName: '[127.0.0.1]:2222' });
    expect(shell.hostKey.fingerprint).toBe(fingerprintOfPubFile(env.CORRAL_TEST_SSH_HOST_PUBKEY!));
    expect(shell.hostKey.knownHostsLine).toBe(`[127.0.0.1]:2222 ${fs.readFileSync(env.CORRAL_TEST_SSH_HOST_PUBKEY!, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')}`);
    expect(shell.home).toBe('/home/corral-test');
    expect(shell.workDir).toBe('/home/corral-test/corral-work');
    expect(sshHandKind.defaultWorkDir(config)).toBe('/home/corral-test/corral-work');
    expect(remote('test -d corral-work && echo yes')).toBe('yes\n');
    expect(sshHandKind.describe(config)).toBe('ssh corral-test@127.0.0.1:2222');
    expect(sshHandKind.kind).toBe('ssh');
    expect(shell.lostReason).toBeUndefined();
    const r = await collect(shell, 'echo hi');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'hi\n', stderr: '' });
  });

  it('runs the six built-in tools end to end on the host', async () => {
    const dirName = `t-${randomBytes(4).toString('hex')}`;
    const config = loopConfig({ working_dir: dirName });
    const shell = await connect(config);
    const workDir = sshHandKind.defaultWorkDir(config);
    expect(workDir).toBe(`/home/corral-test/${dirName}`);
    expect(shell.workDir).toBe(workDir);
    const hand = createShellHand(shell, { workDir, label: 'ssh-test' });
    try {
      // write (into folders that do not exist yet), then check with a separate client
      const w = await hand.execute('write', { file_path: 'src/app.py', content: 'import os\ndef greet():\n    return "hello"\n' });
      expect(w).toMatchObject({ isError: false });
      expect(remote(`cat ${dirName}/src/app.py`)).toBe('import os\ndef greet():\n    return "hello"\n');
      await hand.execute('write', { file_path: 'notes.txt', content: 'nothing here\n' });

      const r = await hand.execute('read', { file_path: 'src/app.py' });
      expect(r.isError).toBe(false);
      expect(r.content).toMatch(/1\s+import os/);
      expect(r.content).toMatch(/3\s+ {4}return "hello"/);

      const e = await hand.execute('edit', { file_path: 'src/app.py', old_string: '"hello"', new_string: '"hello, ssh"' });
      expect(e).toMatchObject({ isError: false, content: 'Replaced 1 occurrence in src/app.py.' });
      expect(remote(`cat ${dirName}/src/app.py`)).toContain('return "hello, ssh"');

      const g = await hand.execute('glob', { pattern: '**/*.py' });
      expect(g).toMatchObject({ isError: false, content: 'src/app.py' });

      const gr = await hand.execute('grep', { pattern: 'hello, s+sh' });
      expect(gr.isError).toBe(false);
      expect(gr.content).toBe('src/app.py:3:    return "hello, ssh"');

      const b = await hand.execute('bash', { command: 'pwd; echo to-stderr >&2; ls src; exit 7' });
      expect(b.isError).toBe(false);
      expect(b.content).toContain(workDir);
      expect(b.content).toContain('to-stderr');
      expect(b.content).toContain('app.py');
      expect(b.content).toMatch(/\[exit code 7\]$/);
      expect(b.details).toMatchObject({ exit_code: 7 });
      const ok = await hand.execute('bash', { command: 'true' });
      expect(ok.content).toBe('[exit code 0]');
      // bash features work (the tool is called bash)
      const arr = await hand.execute('bash', { command: 'a=(x y z); echo ${#a[@]} ${a[1]}; [[ abc == a* ]] && echo glob' });
      expect(arr.content).toBe('3 y\nglob\n[exit code 0]');

      // file errors, mapped
      expect((await hand.execute('read', { file_path: 'missing.txt' })).content).toBe('missing.txt does not exist.');
      expect((await hand.execute('read', { file_path: 'src' })).content).toBe('src is a directory, not a file.');
      expect((await hand.execute('read', { file_path: '/etc/shadow' })).content).toBe('/etc/shadow cannot be accessed (permission denied).');
      expect((await hand.execute('write', { file_path: '/etc/corral-nope', content: 'x' })).content).toBe('/etc/corral-nope cannot be accessed (permission denied).');
      expect((await hand.execute('write', { file_path: 'src', content: 'x' })).content).toBe('src is a directory, not a file.');
    } finally {
      remote(`rm -rf ${dirName}`);
    }
  });

  it('keeps stdout and stderr apart, feeds stdin, closes stdin when none is given, and moves bytes exactly', async () => {
    const shell = await connect(loopConfig());
    expect(await collect(shell, 'cat; echo E >&2', { stdin: Buffer.from('from stdin') })).toMatchObject({ exitCode: 0, stdout: 'from stdin', stderr: 'E\n' });
    // Without stdin, cat sees EOF at once instead of hanging.
    expect(await collect(shell, 'cat; echo done')).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    // The process-group marker never shows, even when the command writes to stderr first.
    const r = await collect(shell, 'echo first >&2; echo out; exit 3');
    expect(r).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'first\n' });
    expect(await collect(shell, 'kill -9 $$')).toMatchObject({ exitCode: 137 });
    expect(await collect(shell, 'pwd', { cwd: '/tmp' })).toMatchObject({ stdout: '/tmp\n' });
    const bad = await collect(shell, 'pwd', { cwd: '/nonexistent-corral' });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/nonexistent-corral/);

    const data = randomBytes(3 * 1024 * 1024 + 17);
    const file = `${shell.workDir}/bin/blob.bin`;
    await shell.writeFile(file, data);
    expect((await shell.readFile(file, data.length)).equals(data)).toBe(true);
    expect(remote(`sha256sum ${file}`).split(' ')[0]).toBe(createHash('sha256').update(data).digest('hex'));
    await expect(shell.readFile(file, data.length - 1)).rejects.toMatchObject({ code: 'TOOBIG' });
    await expect(shell.readFile(`${shell.workDir}/bin/none`, 10)).rejects.toMatchObject({ code: 'ENOENT' });
    await shell.writeFile(file, Buffer.from('short'));
    expect((await shell.readFile(file, 100)).toString()).toBe('short');
    remote(`rm -rf ${shell.workDir}/bin`);
  });

  it('runs many commands at once (more than sshd allows channels per connection)', async () => {
    const shell = await connect(loopConfig());
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => collect(shell, `sleep 0.2; echo ${i}`)));
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 25 }, (_, i) => `${i}\n`));
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
  });

  it('caps 20 MB of output for the model, keeping head and tail, with the full output whole', async () => {
    const shell = await connect(loopConfig());
    const hand = createShellHand(shell, { workDir: shell.workDir, label: 'ssh-test' });
    const t0 = Date.now();
    const r = await hand.execute('bash', { command: "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo THE-END" });
    const ms = Date.now() - t0;
    console.log(`ssh: 20 MB of output in ${ms} ms`);
    expect(ms).toBeLessThan(15_000);
    expect(r.isError).toBe(false);
    expect(r.content.length).toBeLessThanOrEqual(31_000);
    expect(r.content.startsWith('aaaaaaaaaa')).toBe(true);
    expect(r.content).toMatch(/characters cut here/);
    expect(r.content).toMatch(/a\nTHE-END\n\[exit code 0\]$/);
    expect(r.details).toMatchObject({ exit_code: 0, truncated: true, output_chars: 20_000_009 });
    expect(r.fullOutput).toBeDefined();
    expect(r.fullOutput!.length).toBe(20_000_009);
    expect(r.fullOutput!.startsWith('a'.repeat(1000))).toBe(true);
    expect(r.fullOutput!.endsWith('a\nTHE-END\n')).toBe(true);
    expect(r.fullOutput!.indexOf('\n')).toBe(20_000_000);
  });

  it('abort kills the whole process group on the host within 500 ms', async () => {
    const shell = await connect(loopConfig());
    const hand = createShellHand(shell, { workDir: shell.workDir, label: 'ssh-test' });
    const marker = `marker-${randomBytes(4).toString('hex')}`;
    // Only processes that start from here on count (a failed earlier run may have left some).
    const before = new Set(remoteProcesses().map((p) => p.pid));
    const fresh = () => remoteProcesses().filter((p) => !before.has(p.pid));
    const ac = new AbortController();
    const call = hand.execute('bash', { command: `sleep 30; touch ${marker}` }, { signal: ac.signal });
    let procs: ReturnType<typeof remoteProcesses> = [];
    for (let i = 0; i < 50 && !procs.some((p) => p.args === 'sleep 30'); i++) {
      await sleep(100);
      procs = fresh();
    }
    const sleeper = procs.find((p) => p.args === 'sleep 30');
    expect(sleeper).toBeDefined();
    const parent = procs.find((p) => p.args.startsWith('bash -c') && p.args.includes(marker));
    expect(parent?.pgid).toBe(sleeper!.pgid);

    const t0 = performance.now();
    ac.abort();
    const out = await call;
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(500);
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/interrupted after \d+ ms: the command's process group was killed/);
    expect(out.details).toMatchObject({ exit_code: null, signal: 'TERM' });

    await sleep(1_500);
    expect(remote(`test -e corral-work/${marker} && echo exists || echo absent`)).toBe('absent\n');
    const after = fresh();
    expect(after.filter((p) => p.args === 'sleep 30')).toEqual([]);
    expect(after.filter((p) => p.pgid === sleeper!.pgid || p.args.includes(marker))).toEqual([]);
    expect(shell.lostReason).toBeUndefined();
  });

  it('abort right after the start (channel asked for, group id not yet known) still kills the command', async () => {
    const shell = await connect(loopConfig());
    const marker = `early-${randomBytes(4).toString('hex')}`;
    const before = new Set(remoteProcesses().map((p) => p.pid));
    const ac = new AbortController();
    const t0 = performance.now();
    const call = shell.exec(`sleep 29; touch ${marker}`, { signal: ac.signal });
    // After the channel request went out (microtasks), long before the host answers (ms).
    setImmediate(() => ac.abort());
    expect(await call).toEqual({ exitCode: null, signal: 'TERM' });
    expect(performance.now() - t0).toBeLessThan(500);
    await sleep(1_500);
    expect(remote(`test -e corral-work/${marker} && echo exists || echo absent`)).toBe('absent\n');
    expect(remoteProcesses().filter((p) => !before.has(p.pid) && (p.args === 'sleep 29' || p.args.includes(marker)))).toEqual([]);
    // The connection is still good.
    expect(await collect(shell, 'echo still-here')).toMatchObject({ stdout: 'still-here\n' });
  });

  it('a signal aborted before the call starts runs nothing', async () => {
    const shell = await connect(loopConfig());
    const marker = `never-${randomBytes(4).toString('hex')}`;
    const ac = new AbortController();
    const call = shell.exec(`touch ${marker}`, { signal: ac.signal });
    ac.abort();
    expect(await call).toEqual({ exitCode: null, signal: 'TERM' });
    const pre = new AbortController();
    pre.abort();
    expect(await shell.exec(`touch ${marker}`, { signal: pre.signal })).toEqual({ exitCode: null, signal: 'TERM' });
    await sleep(300);
    expect(remote(`test -e corral-work/${marker} && echo exists || echo absent`)).toBe('absent\n');
  });

  it('close() kills what is still running', async () => {
    const shell = await connect(loopConfig());
    const before = new Set(remoteProcesses().map((p) => p.pid));
    const fresh = () => remoteProcesses().filter((p) => !before.has(p.pid));
    const call = shell.exec('sleep 28');
    for (let i = 0; i < 50 && !fresh().some((p) => p.args === 'sleep 28'); i++) await sleep(100);
    expect(fresh().some((p) => p.args === 'sleep 28')).toBe(true);
    await shell.close();
    expect(await call).toEqual({ exitCode: null, lost: 'the hand was closed' });
    expect(shell.lostReason).toBeDefined();
    await sleep(1_500);
    expect(fresh().filter((p) => p.args === 'sleep 28')).toEqual([]);
  });

  it('a host that dies mid-command: the call ends with `lost` within 5 s, and a fresh connect works once it is back', async () => {
    const config = hasNs() ? nsConfig() : loopConfig();
    const shell = await connect(config);
    const hand = createShellHand(shell, { workDir: shell.workDir, label: 'ssh-test' });
    const lost: string[] = [];
    shell.onLost((r) => lost.push(r));
    const out: string[] = [];
    const call = shell.exec('echo started; sleep 20; echo finished', { onOutput: (c) => out.push(c.toString()) });
    for (let i = 0; i < 50 && out.join('') !== 'started\n'; i++) await sleep(20);
    expect(out.join('')).toBe('started\n');

    const t0 = performance.now();
    envScript(hasNs() ? 'kill-ns' : 'kill-sessions');
    const r = await Promise.race([call, sleep(5_000).then(() => 'timeout' as const)]);
    const ms = performance.now() - t0;
    expect(r).not.toBe('timeout');
    expect(r).toMatchObject({ exitCode: null });
    expect((r as { lost?: string }).lost).toMatch(/closed the connection|connection .* (closed|failed)/);
    console.log(`ssh: host killed → lost after ${ms.toFixed(0)} ms (${(r as { lost?: string }).lost})`);
    expect(lost).toHaveLength(1);
    expect(shell.lostReason).toBe(lost[0]);

    // Later calls answer at once.
    expect(await shell.exec('echo x')).toEqual({ exitCode: null, lost: lost[0] });
    await expect(shell.readFile('/etc/hostname', 100)).rejects.toMatchObject({ code: 'LOST' });
    await expect(shell.writeFile('/tmp/x', Buffer.from('x'))).rejects.toBeInstanceOf(RemoteFileError);
    const viaHand = await hand.execute('bash', { command: 'echo x' });
    expect(viaHand.isError).toBe(true);
    expect(viaHand.content).toMatch(/The hand ssh-test is gone: .*The next call will get a fresh one\./);
    await sleep(200);
    expect(lost).toHaveLength(1);

    // The "fresh hand" path: the host is back, a new connect works.
    envScript('start');
    const fresh = await connect(config);
    expect(await collect(fresh, 'echo fresh')).toMatchObject({ exitCode: 0, stdout: 'fresh\n' });
  });

  it('a cut link is noticed by keepalive in about 3 s; calls in flight (exec and file) end with `lost`', async () => {
    const config = hasNs() ? nsConfig() : loopConfig();
    const shell = await connect(config);
    const lost: string[] = [];
    shell.onLost((r) => lost.push(r));
    expect(await collect(shell, 'echo up')).toMatchObject({ stdout: 'up\n' });
    const call = shell.exec('sleep 20');
    await sleep(200);
    envScript(hasNs() ? 'link-down' : 'freeze-sessions');
    const t0 = performance.now();
    try {
      const file = shell.readFile('/etc/hostname', 1000).then(
        () => 'read',
        (e: unknown) => e,
      );
      const late = shell.exec('echo late');
      const r = await Promise.race([call, sleep(6_000).then(() => 'timeout' as const)]);
      const ms = performance.now() - t0;
      console.log(`ssh: link cut → lost after ${ms.toFixed(0)} ms`);
      expect(r).not.toBe('timeout');
      expect((r as { lost?: string }).lost).toMatch(/keepalive/);
      expect(ms).toBeGreaterThan(1_500);
      expect(ms).toBeLessThan(6_000);
      expect(await late).toMatchObject({ exitCode: null, lost: expect.stringMatching(/keepalive/) });
      const fe = await file;
      expect(fe).toBeInstanceOf(RemoteFileError);
      expect(fe).toMatchObject({ code: 'LOST' });
      expect(lost).toHaveLength(1);
    } finally {
      envScript(hasNs() ? 'link-up' : 'thaw-sessions');
    }
    const fresh = await connect(config);
    expect(await collect(fresh, 'echo back')).toMatchObject({ stdout: 'back\n' });
  });

  it('a host that stops answering (sshd frozen) is lost by keepalive too', async () => {
    const shell = await connect(loopConfig());
    const call = shell.exec('sleep 20');
    await sleep(200);
    envScript('freeze-sessions');
    const t0 = performance.now();
    try {
      const r = await Promise.race([call, sleep(6_000).then(() => 'timeout' as const)]);
      expect(r).toMatchObject({ exitCode: null, lost: expect.stringMatching(/keepalive/) });
      expect(performance.now() - t0).toBeLessThan(6_000);
    } finally {
      envScript('thaw-sessions');
      envScript('kill-sessions');
    }
  });
});

describe('connect errors', () => {
  it('wrong port: connection refused', async () => {
    const port = await freePort();
    const err = await rejection(connect(loopConfig({ port })));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toBe(`Cannot connect to corral-test@127.0.0.1:${port}: connection refused (nothing listens there; is sshd running and is the port right?).`);
  });

  it('wrong key: authentication failed, naming the key offered', async () => {
    const key = path.join(scratch, 'other_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const err = await rejection(connect(loopConfig({ identity_file: key })));
    expect(err.code).toBe('AUTH');
    expect(err.message).toMatch(/^Authentication failed for corral-test@127\.0\.0\.1:2222: the server accepted none of .*other_key \(ssh-ed25519 SHA256:/);
    expect(err.message).not.toMatch(/PRIVATE KEY/);
  });

  it('a key with a passphrase and no passphrase given: a clear error, before connecting', async () => {
    const key = path.join(scratch, 'locked_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret words', '-f', key]);
    const err = await rejection(connect(loopConfig({ identity_file: key })));
    expect(err.code).toBe('KEY');
    expect(err.message).toBe(`The key ${key} is protected by a passphrase, and Corral has none for it. Load it into ssh-agent (ssh-add ${key}), or use a key without a passphrase.`);
    // With the passphrase it is readable (and then simply not authorised there).
    expect((await rejection(connect(loopConfig({ identity_file: key }), { passphrase: 'secret words' }))).code).toBe('AUTH');
  });

  it('a missing key file', async () => {
    const err = await rejection(connect(loopConfig({ identity_file: path.join(scratch, 'nope') })));
    expect(err).toMatchObject({ code: 'KEY', message: `The identity file ${path.join(scratch, 'nope')} does not exist on this machine.` });
  });

  it('a server that never answers: handshake timeout; and a connect can be cancelled', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const t0 = performance.now();
      const err = await rejection(connect(loopConfig({ port }), { readyTimeoutMs: 800 }));
      expect(err.code).toBe('TIMEOUT');
      expect(err.message).toMatch(/no SSH handshake within 0\.8 s/);
      expect(performance.now() - t0).toBeLessThan(3_000);

      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const t1 = performance.now();
      const cancelled = await rejection(sshHandKind.connect(loopConfig({ port }), { label: 'test', signal: ac.signal, knownHostsFiles: [noKnownHosts] }));
      expect(cancelled.code).toBe('ABORTED');
      expect(performance.now() - t1).toBeLessThan(1_000);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});

describe('known_hosts', () => {
  const loopKey = () => fs.readFileSync(env.CORRAL_TEST_SSH_HOST_PUBKEY!, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const otherKey = () => fs.readFileSync(env.CORRAL_TEST_SSH_NS_HOST_PUBKEY!, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const knownHosts = (text: string) => {
    const f = path.join(scratch, `known_hosts_${randomBytes(3).toString('hex')}`);
    fs.writeFileSync(f, text);
    return f;
  };

  it('a host on record with the same key: verified', async () => {
    const f = knownHosts(`# comment\n[127.0.0.2]:2222 ${otherKey()}\n[127.0.0.1]:2222 ${loopKey()}\n`);
    const shell = await connect(loopConfig(), { knownHostsFiles: [f] });
    expect(shell.hostKey).toMatchObject({ known: true, knownFrom: `${f}:3` });
  });

  it('hashed entries (ssh-keygen -H) are matched', async () => {
    const f = knownHosts(`[127.0.0.1]:2222 ${loopKey()}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', f], { stdio: 'ignore' });
    expect(fs.readFileSync(f, 'utf8')).toMatch(/^\|1\|/);
    const shell = await connect(loopConfig(), { knownHostsFiles: [f] });
    expect(shell.hostKey.known).toBe(true);
  });

  it('a host on record with another key: refused, with a message that says so', async () => {
    const f = knownHosts(`[127.0.0.1]:2222 ${otherKey()}\n`);
    const err = await rejection(connect(loopConfig(), { knownHostsFiles: [f] }));
    expect(err.code).toBe('HOST_KEY_MISMATCH');
    expect(err.message).toContain(`HOST KEY MISMATCH for corral-test@127.0.0.1:2222: it offered ssh-ed25519 ${fingerprintOfPubFile(env.CORRAL_TEST_SSH_HOST_PUBKEY!)}`);
    expect(err.message).toContain(`${f}:1`);
    expect(err.message).toContain("ssh-keygen -R '[127.0.0.1]:2222'");
  });

  it('a revoked key is refused', async () => {
    const f = knownHosts(`@revoked * ${loopKey()}\n`);
    const err = await rejection(connect(loopConfig(), { knownHostsFiles: [f] }));
    expect(err.code).toBe('HOST_KEY_MISMATCH');
    expect(err.message).toMatch(/@revoked/);
  });

  it('entries for other hosts or ports do not count: unknown, accepted and recorded on the shell', async () => {
    const f = knownHosts(`127.0.0.1 ${otherKey()}\n[127.0.0.1]:2223 ${otherKey()}\n`);
    const shell = await connect(loopConfig(), { knownHostsFiles: [f] });
    expect(shell.hostKey).toMatchObject({ known: false, fingerprint: fingerprintOfPubFile(env.CORRAL_TEST_SSH_HOST_PUBKEY!) });
  });

  it("with Corral's trust store: a first key is remembered (0600), then verified, and a changed key is refused", async () => {
    const store = path.join(scratch, `trust_${randomBytes(3).toString('hex')}`, 'known_hosts');
    const first = await connect(loopConfig(), { trustStore: store });
    expect(first.hostKey).toMatchObject({ known: false, recordedIn: store });
    expect(first.facts).toEqual({ host_key: { type: 'ssh-ed25519', fingerprint: fingerprintOfPubFile(env.CORRAL_TEST_SSH_HOST_PUBKEY!), known: false, first_seen: true } });
    expect(fs.readFileSync(store, 'utf8')).toBe(`[127.0.0.1]:2222 ${loopKey()}\n`);
    expect(fs.statSync(store).mode & 0o777).toBe(0o600);

    const second = await connect(loopConfig(), { trustStore: store });
    expect(second.hostKey).toMatchObject({ known: true, knownFrom: `${store}:1` });
    expect(second.hostKey.recordedIn).toBeUndefined();
    expect(fs.readFileSync(store, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);

    // The host now answers with another key (reinstalled, or someone in between).
    fs.writeFileSync(store, `[127.0.0.1]:2222 ${otherKey()}\n`);
    const err = await rejection(connect(loopConfig(), { trustStore: store }));
    expect(err.code).toBe('HOST_KEY_MISMATCH');
    expect(err.message).toContain(`${store}:1`);
  });
});

describe('~/.ssh/config aliases', () => {
  let configFile: string;
  let aliasKnownHosts: string;
  beforeAll(() => {
    const dir = path.join(scratch, 'sshcfg');
    fs.mkdirSync(dir, { recursive: true });
    aliasKnownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(aliasKnownHosts, `[127.0.0.1]:2222 ${fs.readFileSync(env.CORRAL_TEST_SSH_NS_HOST_PUBKEY!, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')}\n`);
    fs.writeFileSync(path.join(dir, 'extra.conf'), `Host corral-extra\n  HostName 127.0.0.3\n  Port 2200\n  User extra\n`);
    configFile = path.join(dir, 'config');
    fs.writeFileSync(
      configFile,
      [
        `Include ${dir}/extra.conf`,
        'Host corral-loop loop2',
        '  HostName 127.0.0.1',
        '  Port 2222',
        '  User corral-test',
        `  IdentityFile ${env.CORRAL_TEST_SSH_KEY}`,
        'Host corral-checked',
        '  HostName 127.0.0.1',
        '  Port 2222',
        '  User corral-test',
        `  IdentityFile ${env.CORRAL_TEST_SSH_KEY}`,
        `  UserKnownHostsFile ${aliasKnownHosts}`,
        'Host corral-jump',
        '  HostName 127.0.0.1',
        '  ProxyJump somewhere',
        'Host *.corral wild? !neg',
        '  User nobody',
        'Host *',
        '  ServerAliveInterval 30',
        '',
      ].join('\n'),
    );
  });

  it('listSshConfigHosts lists the aliases (Include followed, no wildcards) with what they resolve to', async () => {
    for (const resolver of ['ssh -G', 'ssh-config'] as const) {
      const hosts = await listSshConfigHosts(configFile, { resolver });
      expect(hosts.map((h) => h.alias)).toEqual(['corral-extra', 'corral-loop', 'loop2', 'corral-checked']);
      expect(hosts[0]).toMatchObject({ alias: 'corral-extra', host: '127.0.0.3', port: 2200, user: 'extra' });
      expect(hosts[1]).toEqual({ alias: 'corral-loop', host: '127.0.0.1', port: 2222, user: 'corral-test', identityFile: env.CORRAL_TEST_SSH_KEY });
      expect(hosts[2]).toMatchObject({ alias: 'loop2', host: '127.0.0.1', port: 2222 });
    }
    expect(await listSshConfigHosts(path.join(scratch, 'no-such-config'))).toEqual([]);
  });

  it('connects through an alias, with either resolver; explicit fields win over the alias', async () => {
    for (const resolver of ['ssh -G', 'ssh-config'] as const) {
      const config: SshConfig = { host: 'corral-loop', ssh_config_host: 'corral-loop' };
      const shell = await connect(config, { sshConfigFile: configFile, resolver });
      expect(shell.label).toBe('corral-test@127.0.0.1:2222');
      expect(sshHandKind.describe(config)).toBe('ssh corral-loop');
      expect(await collect(shell, 'whoami')).toMatchObject({ stdout: 'corral-test\n' });
    }
    const port = await freePort();
    const err = await rejection(connect({ host: 'corral-loop', ssh_config_host: 'corral-loop', port }, { sshConfigFile: configFile }));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toContain(`127.0.0.1:${port}`);
  });

  it("uses the alias's UserKnownHostsFile (here with another key: refused), and refuses ProxyJump", async () => {
    const err = await rejection(sshHandKind.connect({ host: 'x', ssh_config_host: 'corral-checked' }, { label: 'test', sshConfigFile: configFile, agent: false }));
    expect(err.code).toBe('HOST_KEY_MISMATCH');
    expect(err.message).toContain(aliasKnownHosts);
    const jump = await rejection(sshHandKind.connect({ host: 'x', ssh_config_host: 'corral-jump' }, { label: 'test', sshConfigFile: configFile, agent: false }));
    expect(jump.code).toBe('CONFIG');
    expect(jump.message).toMatch(/ProxyJump somewhere, which Corral does not support yet/);
    const bad = await rejection(connect({ host: 'x', ssh_config_host: '-oProxyCommand=evil' }, { sshConfigFile: configFile }));
    expect(bad.code).toBe('CONFIG');
  });
});

// Used by scripts (bench:hands): connect() and exec('echo hi') need nothing else.
describe('from a script', () => {
  it('connectSsh + exec, as bench:hands uses it', async () => {
    const shell = await connectSsh(loopConfig(), { knownHostsFiles: [noKnownHosts] });
    opened.push(shell);
    const t0 = performance.now();
    const r = await collect(shell, 'echo hi');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'hi\n' });
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
