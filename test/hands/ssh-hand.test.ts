/**
 * The SSH hand kind (commands, files, a lost host) against real OpenSSH daemons
 * (test/hands-env/ssh.sh, run as root): one on 127.0.0.1:2222 and one inside network namespace
 * corral-ns1 that these tests kill and cut off.
 * Remote-side checks go through the system `ssh` client, a separate connection and a separate
 * implementation. Where `ip netns` is not permitted the script says so in the env file and the
 * dead-host and cut-link tests use the loopback daemon instead: its per-connection processes are
 * killed (SIGKILL) or frozen (SIGSTOP). CORRAL_TEST_SSH_NO_NS=1 forces that path.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { RemoteFileError } from '../../main/hands/remote/types';
import { sshHandKind } from '../../main/hands/ssh';
import { env, sleep, envScript, loopConfig, hasNs, nsConfig, connect, remote, remoteProcesses, collect, fingerprintOfPubFile, useSshBackend } from '../helpers/ssh-backend';
import { fullOutputText } from '../../main/hands/full-output';

useSshBackend();

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

      const b = await hand.execute('bash', { command: 'pwd; echo to-stderr >&2; ls src; (exit 7)' });
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
    expect(fullOutputText(r.fullOutput!).length).toBe(20_000_009 + '[exit code 0]'.length);
    expect(fullOutputText(r.fullOutput!).startsWith('a'.repeat(1000))).toBe(true);
    expect(fullOutputText(r.fullOutput!).endsWith('a\nTHE-END\n[exit code 0]')).toBe(true);
    expect(fullOutputText(r.fullOutput!).indexOf('\n')).toBe(20_000_000);
  });

  it('abort stops the running command (and the rest of its line) on the host; the shell lives on', async () => {
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
    // It runs in the hand's one shell, in the shell's process group.
    const parent = procs.find((p) => p.args.startsWith('bash --norc'));
    expect(parent?.pgid).toBe(sleeper!.pgid);

    const t0 = performance.now();
    ac.abort();
    const out = await call;
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(500);
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^\[interrupted: the call was aborted after [\d,]+ ms; the command was stopped with SIGINT \(exit code 130\); the shell and its state are kept\]$/);
    expect(out.details).toMatchObject({ exit_code: 130, signal: 'INT' });

    await sleep(1_500);
    expect(remote(`test -e corral-work/${marker} && echo exists || echo absent`)).toBe('absent\n');
    const after = fresh();
    expect(after.filter((p) => p.args === 'sleep 30')).toEqual([]);
    expect(after.filter((p) => p.args.includes(marker))).toEqual([]);
    expect(after.filter((p) => p.pgid === sleeper!.pgid).map((p) => p.args)).toEqual([parent!.args]);
    expect(shell.lostReason).toBeUndefined();
    await hand.dispose();
    expect(fresh().filter((p) => p.pgid === sleeper!.pgid)).toEqual([]);
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
    expect(viaHand.content).toMatch(/The hand ssh-test is gone: .*The next call will get a fresh one \(with a fresh shell/);
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
