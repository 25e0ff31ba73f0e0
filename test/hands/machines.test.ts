/**
 * The hands panel's calls (issue #12) against the real sshd, dockerd and adb test backends:
 * dropped files checked in the host, a key kept in the vault only, host keys accepted by the user
 * (a changed one refused with both fingerprints), machines attached as environments, a hand
 * given to a session, used there with the vault's key, and handed over (refused while busy).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toUiError, uiServiceFor, type UiService } from '../../main/api/ui/service';
import { fingerprintOf } from '../../main/hands/ssh/known-hosts';
import { backendTurn, handsEnv } from '../helpers/hands-env';
import { startTestServer, type TestServer } from '../helpers/server';
import { tmpDir } from '../helpers/tmp';

// The user's ~/.ssh is a scratch one: the tests never read or write the real one.
const home = tmpDir('corral-home-');
process.env.HOME = home;

let t: TestServer;
let ui: UiService;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let release: (() => void) | undefined;
let keyText: string;
let target: { host: string; port: number; user: string };
let hostFp: string;

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return toUiError(err);
  }
  throw new Error('expected the call to fail');
};
const credentialCount = async () => (await ui.call('listVaults', {})).reduce((n, v) => n + v.credentials.length, 0);
const allEventsText = () => t.host.log.listSessions({ limit: 1000 }).data.map((s) => JSON.stringify(t.host.log.getEvents(s.id))).join('\n');

beforeAll(async () => {
  release = await backendTurn('ssh');
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  process.env.DOCKER_HOST = docker.CORRAL_TEST_DOCKER_HOST;
  t = await startTestServer();
  ui = uiServiceFor(t.host);
  keyText = fs.readFileSync(ssh.CORRAL_TEST_SSH_KEY!, 'utf8');
  target = { host: ssh.CORRAL_TEST_SSH_HOST!, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER! };
  const pub = fs.readFileSync(ssh.CORRAL_TEST_SSH_HOST_PUBKEY!, 'utf8').split(' ');
  hostFp = fingerprintOf(Buffer.from(pub[1]!, 'base64'));
}, 180_000);
afterAll(async () => {
  await t?.close();
  release?.();
});

describe('dropped files', () => {
  it('a file that is neither a key nor a config, a public key, and a config with no host: each refused, nothing stored', async () => {
    const before = await credentialCount();
    expect(await failure(ui.call('readDroppedFile', { name: 'notes.txt', text: 'hello there\nnothing to see\n' }))).toEqual({ kind: 'invalid_input', message: 'notes.txt is not an ssh config (no Host lines)' });
    const pubText = fs.readFileSync(`${ssh.CORRAL_TEST_SSH_KEY}.pub`, 'utf8');
    expect((await failure(ui.call('readDroppedFile', { name: 'id.pub', text: pubText }))).message).toBe('id.pub is a public key; drop the private key (the file without .pub)');
    expect((await failure(ui.call('readDroppedFile', { name: 'config', text: 'User me\nPort 22\n' }))).message).toBe('config names no Host: there is nothing to attach');
    const broken = keyText.replace(/\n[A-Za-z0-9+/=]{20,}\n/, '\nAAAA\n');
    expect((await failure(ui.call('readDroppedFile', { name: 'id_broken', text: broken }))).message).toMatch(/^id_broken is not a private key Corral can read/);
    expect(await credentialCount()).toBe(before);
  });

  it('an ssh config: its hosts with HostName, User, Port and key file names; wildcards left out; a ProxyJump host marked', async () => {
    const text = ['Host *', '  ServerAliveInterval 5', 'Host box', '  HostName 127.0.0.1', '  User corral-test', '  Port 2222', '  IdentityFile ~/.ssh/id_box', 'Host far', '  ProxyJump box', ''].join('\n');
    const got = await ui.call('readDroppedFile', { name: 'config', text });
    expect(got).toEqual({
      kind: 'ssh_config',
      hosts: [
        { alias: 'box', host: '127.0.0.1', user: 'corral-test', port: 2222, identity_files: ['id_box'] },
        { alias: 'far', host: 'far', identity_files: [], unsupported: 'it uses ProxyJump box' },
      ],
    });
  });

  it('a key protected by a passphrase asks for it; the right one stores it; the same key dropped again is the same credential', async () => {
    const file = path.join(tmpDir(), 'locked');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'open sesame', '-f', file]);
    const locked = fs.readFileSync(file, 'utf8');
    expect(await ui.call('readDroppedFile', { name: 'locked', text: locked })).toEqual({ kind: 'needs_passphrase', message: 'locked is protected by a passphrase' });
    expect(await ui.call('readDroppedFile', { name: 'locked', text: locked, passphrase: 'wrong words' })).toEqual({ kind: 'needs_passphrase', message: 'that passphrase does not open locked' });
    const ok = await ui.call('readDroppedFile', { name: 'locked', text: locked, passphrase: 'open sesame' });
    expect(ok).toMatchObject({ kind: 'ssh_key', credential: { key_type: 'ssh-ed25519', reused: false, display_name: 'locked' } });
    const again = await ui.call('readDroppedFile', { name: 'locked', text: locked, passphrase: 'open sesame' });
    expect(again).toMatchObject({ kind: 'ssh_key', credential: { reused: true } });
    if (ok.kind === 'ssh_key' && again.kind === 'ssh_key') expect(again.credential.id).toBe(ok.credential.id);
  });
});

describe('an SSH host from a dropped key', () => {
  let credentialId = '';
  let envId = '';

  it('the key goes to the vault; the test shows a new host key; attaching waits for it to be accepted', async () => {
    const got = await ui.call('readDroppedFile', { name: 'id_ed25519', text: keyText });
    if (got.kind !== 'ssh_key') throw new Error(`not stored: ${JSON.stringify(got)}`);
    credentialId = got.credential.id;
    expect(JSON.stringify(got)).not.toContain('PRIVATE KEY');
    const probe = await ui.call('testSshHost', { ...target, credentialId });
    expect(probe).toEqual({ host_key: { type: 'ssh-ed25519', fingerprint: hostFp, status: 'new', recorded: [] }, auth: { ok: true, message: expect.stringContaining(`(${credentialId})`) } });
    const refused = await failure(ui.call('attachMachine', { name: 'loop', machine: { type: 'ssh', ...target, credentialId } }));
    expect(refused.message).toBe(`The host key of ${target.host}:${target.port} (ssh-ed25519 ${hostFp}) has not been accepted yet: test the connection and accept it first`);
    expect(fs.existsSync(path.join(t.host.dataDir, 'ssh', 'known_hosts'))).toBe(false);
  });

  it('a changed host key is refused, showing the old and the new fingerprint; nothing is recorded', async () => {
    const other = path.join(tmpDir(), 'other');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const otherPub = fs.readFileSync(`${other}.pub`, 'utf8').split(' ');
    const oldFp = fingerprintOf(Buffer.from(otherPub[1]!, 'base64'));
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    const userKnown = path.join(home, '.ssh', 'known_hosts');
    fs.writeFileSync(userKnown, `[${target.host}]:${target.port} ${otherPub[0]} ${otherPub[1]}\n`);
    try {
      const probe = await ui.call('testSshHost', { ...target, credentialId });
      expect(probe.host_key).toEqual({ type: 'ssh-ed25519', fingerprint: hostFp, status: 'changed', recorded: [{ type: 'ssh-ed25519', fingerprint: oldFp, where: `${userKnown}:1` }] });
      expect(probe.auth).toEqual({ ok: false, message: 'not tried: the host key is not the one on record' });
      const trust = await failure(ui.call('trustHostKey', { ...target, fingerprint: hostFp }));
      expect(trust.message).toContain(oldFp);
      expect(trust.message).toContain(hostFp);
      expect((await failure(ui.call('attachMachine', { name: 'loop', machine: { type: 'ssh', ...target } }))).message).toMatch(new RegExp(`changed: on record ${oldFp.replace(/[+/]/g, '\\$&')}, offered now ${hostFp.replace(/[+/]/g, '\\$&')}`));
      expect(fs.existsSync(path.join(t.host.dataDir, 'ssh', 'known_hosts'))).toBe(false);
    } finally {
      fs.rmSync(userKnown);
    }
  });

  it('accepting a fingerprint other than the offered one is refused; the offered one is recorded; then the machine attaches', async () => {
    const wrong = `SHA256:${'A'.repeat(43)}`;
    expect((await failure(ui.call('trustHostKey', { ...target, fingerprint: wrong }))).message).toBe(`${target.host}:${target.port} now offers ssh-ed25519 ${hostFp}, not the ${wrong} that was accepted; test the connection again`);
    expect(await ui.call('trustHostKey', { ...target, fingerprint: hostFp })).toEqual({ status: 'recorded', recorded_in: path.join(t.host.dataDir, 'ssh', 'known_hosts') });
    expect(await ui.call('trustHostKey', { ...target, fingerprint: hostFp })).toEqual({ status: 'already_known', recorded_in: null });
    expect((await ui.call('testSshHost', { ...target, credentialId })).host_key.status).toBe('known');
    const env = await ui.call('attachMachine', { name: 'loop', machine: { type: 'ssh', ...target, credentialId } });
    expect(env.config).toEqual({ type: 'ssh', ...target });
    envId = env.id;
    // The key is now offered to that host only.
    const cred = (await ui.call('listVaults', {})).flatMap((v) => v.credentials).find((c) => c.id === credentialId)!;
    expect(cred.auth.hosts).toEqual([target.host]);
  });

  it('a session given the hand runs a command there with the vault key; the key is in no event and no file but the database', async () => {
    const agent = { model: { id: 'm' }, system: null, tools: [{ type: 'agent_toolset_20260401' }] };
    const { session: a } = t.host.log.createSession({ record: { agent } });
    const { session: b } = t.host.log.createSession({ record: { agent } });
    expect((await ui.call('giveHand', { sessionId: a.id, environmentId: envId, name: 'loop' })).map((h) => h.name)).toEqual(['main', 'loop']);
    expect((await failure(ui.call('giveHand', { sessionId: a.id, environmentId: envId, name: 'loop' }))).message).toBe("the session already has a hand named 'loop'");
    const out = await t.host.hands.execute(a.id, 'loop', 'bash', { command: 'whoami' });
    expect(out).toMatchObject({ isError: false });
    expect(String(out.content)).toContain(target.user);
    const used = t.host.log.getEvents(a.id).filter((e) => e.type === 'vault.credential_used');
    expect(used).toMatchObject([{ credential_id: credentialId, purpose: 'ssh' }]);

    // Busy in a running call: refused, and both sessions keep what they had.
    const running = t.host.hands.execute(a.id, 'loop', 'bash', { command: 'sleep 1; echo slept' });
    await new Promise((r) => setTimeout(r, 200));
    const busy = await failure(ui.call('handOverHand', { fromSessionId: a.id, name: 'loop', toSessionId: b.id }));
    expect(busy.message).toBe(`hand 'loop' is busy running a tool call in session ${a.id}; hand it over once the call has finished`);
    expect((await ui.call('listHands', { sessionId: b.id })).map((h) => h.name)).toEqual(['main']);
    expect(String((await running).content)).toContain('slept');

    const moved = await ui.call('handOverHand', { fromSessionId: a.id, name: 'loop', toSessionId: b.id });
    expect(moved.from.map((h) => h.name)).toEqual(['main']);
    expect(moved.to.map((h) => h.name)).toEqual(['main', 'loop']);
    expect(t.host.log.getEvents(a.id).at(-1)).toMatchObject({ type: 'hand.handed_over', hand: 'loop', to_session_id: b.id });
    expect(t.host.log.getEvents(b.id).at(-1)).toMatchObject({ type: 'hand.received', hand: 'loop', from_session_id: a.id });
    expect(String((await t.host.hands.execute(b.id, 'loop', 'bash', { command: 'echo $USER' })).content)).toContain(target.user);

    // A line of the key's private part (the first lines are the same for every key of its kind).
    const body = keyText.trim().split('\n').at(-2)!;
    expect(body.length).toBeGreaterThan(20);
    expect(allEventsText()).not.toContain(body);
    const grep = spawnSync('grep', ['-rlF', body, t.host.dataDir, home, path.dirname(t.host.hands.workDirOf('x'))], { encoding: 'utf8' });
    expect(grep.status).toBe(1); // nothing found (the database holds it sealed)
    expect(grep.stdout).toBe('');
  });
});

describe('containers and devices', () => {
  it('discovery lists the engine with its images and the adb devices', async () => {
    process.env.ANDROID_ADB_SERVER_PORT = handsEnv('adb').ANDROID_ADB_SERVER_PORT;
    const found = await ui.call('discoverMachines', {});
    const engine = found.engines.find((e) => e.endpoint === docker.CORRAL_TEST_DOCKER_HOST);
    expect(engine).toMatchObject({ reachable: true, kind: 'docker' });
    expect(engine!.images).toContain(docker.CORRAL_TEST_DOCKER_IMAGE);
    expect(found.adb.server).toBe(`127.0.0.1:${process.env.ANDROID_ADB_SERVER_PORT}`);
  });

  it('an image the engine lacks and a device that is not there are refused; a present image attaches', async () => {
    const before = (await ui.call('listEnvironments', {})).length;
    expect((await failure(ui.call('attachMachine', { name: 'x', machine: { type: 'docker', image: 'corral-test/nope:1', docker_host: docker.CORRAL_TEST_DOCKER_HOST } }))).message).toMatch(/^The image corral-test\/nope:1 is not on the engine/);
    expect((await failure(ui.call('attachMachine', { name: 'x', machine: { type: 'adb', serial: 'gone:1234' } }))).message).toMatch(/gone:1234|adb server/);
    expect((await ui.call('listEnvironments', {})).length).toBe(before);
    const box = await ui.call('attachMachine', { name: 'box', machine: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE!, docker_host: docker.CORRAL_TEST_DOCKER_HOST } });
    expect(box.config).toEqual({ type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST });
  });
});

describe('the same calls over HTTP (/v1/hands/…)', () => {
  const post = (path: string, body: unknown) =>
    fetch(`${t.server.url}${path}`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('a bad file is a 400 naming it; a config is read; the host test reports the key on record', async () => {
    const bad = await post('/v1/hands/dropped_files', { name: 'x.bin', text: 'not a key\n' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe('x.bin is not an ssh config (no Host lines)');
    const cfg = await post('/v1/hands/dropped_files', { name: 'config', text: 'Host h\n  HostName 10.0.0.9\n' });
    expect(await cfg.json()).toEqual({ kind: 'ssh_config', hosts: [{ alias: 'h', host: '10.0.0.9', identity_files: [] }] });
    const unknown = await post('/v1/hands/dropped_files', { name: 'config', text: 'Host h\n', extra: 1 });
    expect(unknown.status).toBe(400);
    const probe = await post('/v1/hands/ssh_test', target);
    expect(((await probe.json()) as { host_key: { status: string } }).host_key.status).toBe('known');
    const found = await fetch(`${t.server.url}/v1/hands/discover`, { headers: { 'x-api-key': t.apiKey } });
    expect(((await found.json()) as { engines: unknown[] }).engines.length).toBeGreaterThan(0);
  });
});
