/**
 * Where work folders live and what may be read at rest: per-session folders under a work root
 * outside the data folder; a local environment's working_dir only inside the allowed roots
 * (refused with a 400 naming the field, and again at provisioning); the data folder 0700 and
 * every file in it 0600 after a session that kept outputs.
 */
import Anthropic from '@anthropic-ai/sdk';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { startTestServer, type TestServer } from '../helpers/server';
import { tmpDir } from '../helpers/tmp';

let t: TestServer | undefined;
let host: Host | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await host?.close();
  host = undefined;
});

const newSession = (h: Host, envId: string) =>
  h.log.createSession(
    { environment_id: envId, record: { agent: { type: 'agent', id: 'agent_x', version: 1, name: 'x', model: { id: 'm' } }, title: 't', metadata: {}, resources: [], vault_ids: [] } },
    [],
  ).session.id;

describe('work folders', () => {
  it('live under the work root, outside the data folder, 0700', async () => {
    const dataDir = tmpDir();
    const workRoot = tmpDir('corral-work-');
    host = createHost({ dataDir, workRoot });
    const env = host.environments.create({ name: 'l', config: { type: 'local' }, metadata: {}, description: null });
    const id = newSession(host, env.id);
    expect(host.hands.workDirOf(id)).toBe(path.join(workRoot, id));
    const r = await host.hands.execute(id, undefined, 'bash', { command: 'pwd' });
    expect(r.content).toContain(path.join(workRoot, id));
    expect(fs.statSync(path.join(workRoot, id)).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(dataDir, 'work'))).toBe(false);
    // A work root inside the data folder is refused.
    await host.close();
    host = undefined;
    expect(() => createHost({ dataDir, workRoot: path.join(dataDir, 'work') })).toThrow(/must not contain one another/);
  });

  it('a local working_dir outside the allowed roots is refused with a 400 naming the field', async () => {
    t = await startTestServer();
    const workRoot = path.dirname(t.host.hands.workDirOf('x'));
    for (const bad of ['/', os.homedir(), t.host.dataDir, path.join(t.host.dataDir, 'sub'), workRoot, 'relative/dir', path.join(workRoot, '..', 'elsewhere')]) {
      const err = await t.client.beta.environments.create({ name: 'bad', config: { type: 'local', working_dir: bad } as never }).catch((e) => e);
      expect(err, bad).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.message).toContain('config.working_dir');
    }
    // A symbolic link inside the root that leads out is judged by where it leads.
    fs.mkdirSync(workRoot, { recursive: true });
    fs.symlinkSync('/', path.join(workRoot, 'to-root'));
    const viaLink = await t.client.beta.environments.create({ name: 'bad', config: { type: 'local', working_dir: path.join(workRoot, 'to-root', 'etc') } as never }).catch((e) => e);
    expect(viaLink).toBeInstanceOf(Anthropic.BadRequestError);

    const good = await t.client.beta.environments.create({ name: 'good', config: { type: 'local', working_dir: path.join(workRoot, 'shared-project') } as never });
    expect((good.config as unknown as { working_dir: string }).working_dir).toBe(path.join(workRoot, 'shared-project'));
    const upd = await t.client.beta.environments.update(good.id, { config: { type: 'local', working_dir: '/etc' } as never }).catch((e) => e);
    expect(upd).toBeInstanceOf(Anthropic.BadRequestError);
    expect(upd.message).toContain('config.working_dir');
  });

  it('a working_dir stored before the rules (or past them) is refused again when the hand is provisioned', async () => {
    host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
    const env = host.environments.create({ name: 'old', config: { type: 'local', working_dir: '/' }, metadata: {}, description: null });
    const id = newSession(host, env.id);
    const r = await host.hands.execute(id, undefined, 'bash', { command: 'cat /etc/hostname' });
    expect(r).toMatchObject({ isError: true, details: { provision_failed: true } });
    expect(r.content).toMatch(/working_dir '\/' is outside the folders local environments may use/);
    expect(host.log.getEvents(id, { limit: 100 }).at(-1)).toMatchObject({ type: 'hand.lost', reason: expect.stringContaining('working_dir') });
  });
});

/** Every entry under `dir` with its permission bits. */
function modes(dir: string): { path: string; dir: boolean; mode: number }[] {
  const out = [{ path: dir, dir: true, mode: fs.statSync(dir).mode & 0o7777 }];
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    out.push({ path: p, dir: st.isDirectory(), mode: st.mode & 0o7777 });
  }
  return out;
}

describe('files at rest', () => {
  it('the data folder is 0700 and every file in it 0600 after a session that kept outputs, older files included', async () => {
    const dataDir = tmpDir();
    fs.chmodSync(dataDir, 0o755);
    fs.mkdirSync(path.join(dataDir, 'outputs', 'sesn_old'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dataDir, 'outputs', 'sesn_old', 'call_1.txt'), 'an old transcript', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'outputs', 'sesn_old', 'call_1.txt'), 0o644);
    fs.chmodSync(path.join(dataDir, 'outputs'), 0o755);
    const saved = process.umask(0o022);
    try {
      host = createHost({ dataDir, workRoot: tmpDir('corral-work-') });
      const env = host.environments.create({ name: 'l', config: { type: 'local' }, metadata: {}, description: null });
      const id = newSession(host, env.id);
      const r = await host.hands.execute(id, undefined, 'bash', { command: 'seq 1 20000' }, { toolUseId: 'toolu_big' });
      expect(r.details).toMatchObject({ full_output: { file: 'toolu_big.txt' } });
      host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'more' }] });
      const all = modes(dataDir);
      expect(all.map((e) => path.relative(dataDir, e.path))).toEqual(expect.arrayContaining(['corral.sqlite', 'corral.sqlite-wal', 'corral.sqlite-shm', path.join('outputs', id, 'toolu_big.txt')]));
      for (const e of all) expect(`${path.relative(dataDir, e.path) || '.'} ${e.mode.toString(8)}`).toBe(`${path.relative(dataDir, e.path) || '.'} ${e.dir ? '700' : '600'}`);
      expect(fs.statSync(host.hands.workDirOf(id)).mode & 0o777).toBe(0o700);

      // What the modes are for: another local user reads nothing (checked where we can switch users).
      if (process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0) {
        for (const f of ['corral.sqlite', path.join('outputs', id, 'toolu_big.txt'), path.join('outputs', 'sesn_old', 'call_1.txt')]) {
          const other = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', path.join(dataDir, f)], { encoding: 'utf8' });
          expect(other.status, f).not.toBe(0);
          expect(other.stderr).toMatch(/Permission denied/);
        }
      }
    } finally {
      process.umask(saved);
    }
  });
});
