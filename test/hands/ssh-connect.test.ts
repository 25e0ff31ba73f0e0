/**
 * Connecting the SSH hand against the real OpenSSH daemons (test/hands-env/ssh.sh): connect
 * errors, known_hosts checks, ~/.ssh/config aliases and use from a script.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectSsh, listSshConfigHosts, sshHandKind, type SshConfig } from '../../main/hands/ssh';
import { env, scratch, noKnownHosts, opened, loopConfig, connect, collect, fingerprintOfPubFile, freePort, rejection, useSshBackend } from '../helpers/ssh-backend';

useSshBackend();

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
