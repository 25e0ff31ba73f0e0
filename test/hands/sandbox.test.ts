/**
 * The local hand's sandbox (main/hands/local/sandbox.ts) on this machine: bubblewrap, its PID
 * namespace, the proxy's allow list, and what a command can and cannot touch. Linux only (CI
 * runs Debian as root, where bubblewrap makes its user namespace itself).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLocalHand, type LocalHand } from '../../main/hands/local';
import { sandboxAvailability } from '../../main/hands/local/sandbox';
import { tmpDir } from '../helpers/tmp';
import { pgrep } from '../helpers/processes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hands: LocalHand[] = [];
const hand = (opts: Parameters<typeof createLocalHand>[0]) => {
  const h = createLocalHand(opts);
  hands.push(h);
  return h;
};
afterEach(async () => {
  await Promise.all(hands.splice(0).map((h) => h.dispose()));
});
const bash = async (h: LocalHand, command: string, timeout_ms = 20_000) => (await h.execute('bash', { command, timeout_ms })).content;
const running = (marker: string) => pgrep(marker);

describe.runIf(process.platform === 'linux')('the local hand in its sandbox', () => {
  it('is available on this machine, and says so', async () => {
    expect(await sandboxAvailability()).toEqual({ ok: true });
    const h = hand({ workDir: tmpDir() });
    expect(await h.sandboxState()).toEqual({ enabled: true, network: 'no network' });
    const off = hand({ workDir: tmpDir(), sandbox: false, sandboxOffReason: 'turned off for the test' });
    expect(await off.sandboxState()).toEqual({ enabled: false, reason: 'turned off for the test', on_purpose: true });
  });

  it('where no sandbox can run, the hand says so in hand.ready, its description and the bash tool, and in the log', () => {
    // A PATH without bubblewrap, socat and ripgrep.
    const bin = tmpDir('corral-bin-');
    for (const b of ['bash', 'sh', 'env', 'cat', 'echo']) fs.symlinkSync(execFileSync('bash', ['-c', `command -v ${b}`], { encoding: 'utf8' }).trim(), path.join(bin, b));
    const script = `
      import { createHost } from '${path.resolve(__dirname, '../../main/host.ts')}';
      const host = createHost({ dataDir: '${tmpDir()}', workRoot: '${tmpDir('corral-work-')}' });
      const env = host.environments.create({ name: 'l', config: { type: 'local' }, metadata: {}, description: null });
      const { session } = host.log.createSession({ environment_id: env.id, record: { agent: { model: { id: 'm' } } } });
      const r = await host.hands.execute(session.id, undefined, 'bash', { command: 'echo ran' });
      const ready = host.log.getEvents(session.id, { types: ['hand.ready'], limit: 1 })[0];
      console.log(JSON.stringify({ content: r.content, ready, list: host.hands.list(session.id) }));
      await host.close();
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { PATH: bin, HOME: tmpDir() }, timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(out.content).toBe('ran\n[exit code 0]');
    expect(out.ready).toMatchObject({ sandbox: { enabled: false, on_purpose: false, reason: expect.stringMatching(/bubblewrap/) } });
    expect(out.ready.description).toMatch(/NOT sandboxed: .*bubblewrap/);
    expect(out.list[0].description).toMatch(/NOT sandboxed/);
    expect(out.list[0].notice).toMatch(/WITHOUT a sandbox/);
    expect(r.stderr).toMatch(/WITHOUT a sandbox/);
  });

  it('writes only the work folder and its own TMPDIR, inside a denied root', async () => {
    const root = tmpDir('corral-root-');
    const work = path.join(root, 'sesn_a');
    const neighbour = path.join(root, 'sesn_b');
    fs.mkdirSync(neighbour);
    fs.writeFileSync(path.join(neighbour, 'notes.txt'), 'neighbour-secret');
    const tmp = path.join(root, '.tmp', 'sesn_a');
    const h = hand({ workDir: work, tmpDir: tmp, sandbox: { denyRead: [root], allowedHosts: [] } });
    const out = await bash(h, [
      'echo inside > made.txt && cat made.txt',
      'echo "tmp=$TMPDIR"; mktemp >/dev/null && echo tmp-ok',
      `echo x > ${root}/escape.txt`,
      'echo x > /tmp/corral-escape.txt',
      `echo x > $HOME/corral-escape.txt`,
      `cat ${neighbour}/notes.txt`,
      `ls ${root}`,
    ].join('; '));
    expect(out).toContain('inside');
    expect(out).toContain(`tmp=${tmp}`);
    expect(out).toContain('tmp-ok');
    expect(out).not.toContain('neighbour-secret');
    expect(fs.existsSync(path.join(root, 'escape.txt'))).toBe(false);
    expect(fs.existsSync('/tmp/corral-escape.txt')).toBe(false);
    expect(fs.existsSync(path.join(process.env.HOME!, 'corral-escape.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(work, 'made.txt'), 'utf8')).toBe('inside\n');
  });

  it('hides the secret stores under HOME', async () => {
    const home = tmpDir('corral-home-');
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'PLANTED-SSH-KEY');
    fs.mkdirSync(path.join(home, '.aws'));
    fs.writeFileSync(path.join(home, '.aws', 'credentials'), 'PLANTED-AWS');
    fs.writeFileSync(path.join(home, '.netrc'), 'PLANTED-NETRC');
    fs.writeFileSync(path.join(home, 'notes.txt'), 'ordinary file');
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const h = hand({ workDir: tmpDir() });
      const out = await bash(h, 'cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/notes.txt; ls -la ~/.ssh; grep -r PLANTED ~ 2>&1 | head');
      expect(out).toContain('ordinary file');
      expect(out).not.toContain('PLANTED');
    } finally {
      process.env.HOME = saved;
    }
  });

  it('has its own PID namespace: the host and its environment are out of sight', async () => {
    const h = hand({ workDir: tmpDir() });
    const out = await bash(h, `echo "ppid=$PPID"; ls /proc | grep -c '^[0-9]'; test -e /proc/${process.pid} && echo HOST-VISIBLE; cat /proc/${process.pid}/environ 2>&1 | head -c 100; echo`);
    expect(out).not.toContain('HOST-VISIBLE');
    const count = Number(/^(\d+)$/m.exec(out)?.[1]);
    expect(count).toBeLessThan(20); // a handful of the sandbox's own
  });

  it('reaches nothing but its proxy, which lets through only the allowed hosts', async () => {
    const server = http.createServer((_req, res) => res.end('hello from the host')).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const curl = (url: string) => `curl -sS -m 5 --noproxy '' ${url} 2>&1; echo " rc=$?"`;
      const closed = hand({ workDir: tmpDir() });
      // Directly (no proxy): the sandbox has a network namespace of its own, with nothing in it.
      expect(await bash(closed, `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/ 2>&1; echo " rc=$?"`)).toMatch(/Couldn't connect|Failed to connect/);
      // Through the proxy: not on the allow list.
      expect(await bash(closed, curl(`http://127.0.0.1:${port}/`))).toMatch(/403|blocked by network allowlist/);
      const open = hand({ workDir: tmpDir(), sandbox: { denyRead: [], allowedHosts: [`127.0.0.1:${port}`] } });
      expect(await open.sandboxState()).toMatchObject({ enabled: true, network: expect.stringContaining(`127.0.0.1:${port}`) });
      expect(await bash(open, curl(`http://127.0.0.1:${port}/`))).toContain('hello from the host');
      // Only what is listed: the same server by another name is refused.
      expect(await bash(open, curl(`http://localhost:${port}/`))).toMatch(/403|blocked by network allowlist/);
      expect(await bash(open, curl(`http://127.0.0.1:${port + 1}/`))).toMatch(/403|blocked by network allowlist/);
    } finally {
      server.close();
    }
  });

  it('cannot open Unix sockets (the Docker, adb or agent sockets of this machine)', async () => {
    const work = tmpDir();
    const sock = path.join(work, 's.sock');
    const server = net.createServer((c) => c.end('socket-answer\n')).listen(sock);
    await new Promise((r) => server.once('listening', r));
    try {
      const cmd = 'socat -u UNIX-CONNECT:./s.sock STDOUT 2>&1; echo " rc=$?"';
      expect(await bash(hand({ workDir: work, sandbox: false }), cmd)).toContain('socket-answer');
      const out = await bash(hand({ workDir: work }), cmd);
      expect(out).not.toContain('socket-answer');
      expect(out).toMatch(/Operation not permitted|Permission denied/);
    } finally {
      server.close();
    }
  });

  it('keeps background jobs between calls (one shell per hand), and an abort ends only the running command', async () => {
    const work = tmpDir();
    const h = hand({ workDir: work });
    const r = await h.execute('bash', { command: '(sleep 1.25; echo late > late.txt) > /dev/null 2>&1 & sleep 31.25 > /dev/null 2>&1 & echo started' });
    expect(r.content).toBe('started\n[exit code 0]');
    await sleep(1800);
    expect(fs.existsSync(path.join(work, 'late.txt'))).toBe(true);
    expect(running('sleep 31.25')).not.toBe('');

    const ac = new AbortController();
    const call = h.execute('bash', { command: 'sleep 32.5; echo done > marker' }, { signal: ac.signal });
    for (let i = 0; i < 50 && running('sleep 32.5') === ''; i++) await sleep(50);
    expect(running('sleep 32.5')).not.toBe('');
    const t0 = performance.now();
    ac.abort();
    const res = await call;
    expect(performance.now() - t0).toBeLessThan(500);
    expect(res.details).toMatchObject({ interrupted: true });
    await sleep(300);
    expect(running('sleep 32.5')).toBe('');
    expect(fs.existsSync(path.join(work, 'marker'))).toBe(false);
    // The background job lives on with the shell, and ends with the hand.
    expect(running('sleep 31.25')).not.toBe('');
    await h.dispose();
    for (let i = 0; i < 20 && running('sleep 31.25') !== ''; i++) await sleep(50);
    expect(running('sleep 31.25')).toBe('');
  });

  it('a disposed hand leaves nothing of its sandbox (the runtime\'s socat bridges outlived it under load)', async () => {
    const work = tmpDir();
    const h = hand({ workDir: work });
    // One sandbox for the hand's one shell, whatever the number of calls.
    for (let i = 0; i < 8; i++) expect(await bash(h, 'echo ran >> runs.log; sleep 0.3; echo ok')).toBe('ok\n[exit code 0]');
    expect(running(`bwrap.*${work}`).split('\n').filter(Boolean).length).toBeLessThanOrEqual(2); // the outer bwrap and the namespace's init
    await h.dispose();
    for (let i = 0; i < 30 && running(work) !== ''; i++) await sleep(100);
    expect(running(work)).toBe('');
  });

  it('a shell killed for ignoring an interrupt leaves nothing of its sandbox: bubblewrap\'s own session (its init, the proxy bridges) ends too', async () => {
    const work = tmpDir();
    const h = hand({ workDir: work });
    const ac = new AbortController();
    const call = h.execute('bash', { command: "trap '' INT; sleep 33.75" }, { signal: ac.signal });
    for (let i = 0; i < 50 && running('sleep 33.75') === ''; i++) await sleep(50);
    // The sandbox binds the work folder: every process of it names the folder in its arguments.
    const before = running(`bwrap.*${work}`).split('\n').filter(Boolean);
    expect(before.length).toBeGreaterThanOrEqual(2); // the outer bwrap and the namespace's init
    ac.abort();
    expect((await call).content).toMatch(/did not stop on SIGINT, so the shell was killed/);
    // The inner bwrap (a session of its own) outlived the outer one before, with the runtime's
    // socat bridges under it.
    for (let i = 0; i < 60 && running(work) !== ''; i++) await sleep(100);
    expect(running(work)).toBe('');
  });
});

describe('file tools and symbolic links planted by commands', () => {
  let outside: string;
  beforeAll(() => {
    outside = tmpDir('corral-outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside-secret');
  });
  afterAll(() => fs.rmSync(outside, { recursive: true, force: true }));

  it('a link made by bash to a folder outside cannot be read, written or searched through', async () => {
    for (const sandboxed of [true, false]) {
      const work = tmpDir();
      const h = hand({ workDir: work, sandbox: sandboxed ? undefined : false });
      await bash(h, `ln -s ${outside} x; ln -s ${outside}/secret.txt y; ln -s ${outside}/new.txt z`);
      for (const [tool, input] of [
        ['read', { file_path: 'x/secret.txt' }],
        ['read', { file_path: 'y' }],
        ['write', { file_path: 'z', content: 'planted' }],
        ['write', { file_path: 'x/new2.txt', content: 'planted' }],
        ['edit', { file_path: 'y', old_string: 'outside', new_string: 'inside' }],
        ['grep', { pattern: 'secret', path: 'x' }],
      ] as const) {
        const r = await h.execute(tool, { ...input });
        expect(r.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
        expect(r.content).not.toContain('outside-secret');
      }
      expect((await h.execute('grep', { pattern: 'outside-secret' })).content).toMatch(/No matches/);
      expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    }
  });

  it('a folder swapped for a link while the tools run never lets them out', async () => {
    const work = tmpDir();
    const h = hand({ workDir: work, sandbox: false });
    fs.mkdirSync(path.join(work, 'd'));
    fs.writeFileSync(path.join(work, 'd', 'secret.txt'), 'inside copy');
    // A background job flips d between a real folder and a link to the outside, as fast as it can.
    const flip = `while true; do rm -rf d; ln -s ${outside} d; rm -f d; mkdir d; echo 'inside copy' > d/secret.txt; done > /dev/null 2>&1 &`;
    await bash(h, flip);
    let reads = 0;
    for (let i = 0; i < 1000; i++) {
      const r = await h.execute('read', { file_path: 'd/secret.txt' });
      expect(r.content).not.toContain('outside-secret');
      if (!r.isError) reads++;
      const w = await h.execute('write', { file_path: 'd/planted.txt', content: 'planted' });
      expect(w.content).not.toContain('outside-secret');
    }
    await h.dispose();
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside-secret');
    expect(reads).toBeGreaterThan(0); // the race was on: some reads found the real folder
  });
});
