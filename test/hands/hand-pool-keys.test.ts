/**
 * Pooled ssh hands log in with the vault's keys as a hand connected for a session would (the
 * host's default vault's keys for that host), and are given only to sessions whose keys for the
 * host are those; a remote hand whose provisioning fails after it connected is closed (its
 * container removed), not left running. Real sshd and dockerd of test/hands-env.
 */
import fs from 'node:fs';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import type { LoggedEvent } from '../../main/session/types';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';

let host: Host;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let sshEnv: string;
let ownKeys: string;
const LABEL = `pool-keys-${process.pid}`;

async function until(ok: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}: ${JSON.stringify(host.hands.pool.state())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
let fallback: string;
const poolOf = (env: string) => host.hands.pool.state().find((s) => s.environment_id === env);
const events = (id: string): LoggedEvent[] => host.log.getEvents(id, { from: 1, limit: 1000 });

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  // No agent: the only key the host could offer is a vault's.
  delete process.env.SSH_AUTH_SOCK;
  const key = fs.readFileSync(ssh.CORRAL_TEST_SSH_KEY!, 'utf8');
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-'), handPool: { [LABEL]: 1 } });
  await host.started;
  fallback = host.vault.createVault({ display_name: 'default', is_default: true }).id;
  await host.vault.createCredential(fallback, { display_name: 'host key', auth: { type: 'ssh_private_key', private_key: key, hosts: [ssh.CORRAL_TEST_SSH_HOST!] } });
  // A session vault with its own (same-valued, but another) credential for the host: its hand
  // would log in with that one first, so a pooled hand is not its hand.
  ownKeys = host.vault.createVault({ display_name: 'own' }).id;
  await host.vault.createCredential(ownKeys, { display_name: 'own key', auth: { type: 'ssh_private_key', private_key: key, hosts: [ssh.CORRAL_TEST_SSH_HOST!] } });
  // No identity_file: the environment names no key.
  sshEnv = host.environments.create({ name: LABEL, config: { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER } as never, metadata: {}, description: null }).id;
}, 180_000);
afterAll(() => host?.close());

function session(vaultIds: string[]): string {
  return host.log.createSession({ environment_id: sshEnv, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, vault_ids: vaultIds } }).session.id;
}

describe('pooled ssh hands and vault keys', () => {
  it('are made with the default vault\'s key for the host and given to sessions whose keys are the same, not to others', async () => {
    await withBackendTurn('ssh', async () => {
      host.hands.pool.fill();
      await until(() => poolOf(sshEnv)?.ready === 1, 'a pooled ssh hand logged in with the vault key');
      expect(poolOf(sshEnv)).toMatchObject({ failures: 0 });
      const plain = session([]);
      const r1 = await host.hands.execute(plain, undefined, 'bash', { command: 'id -un' });
      expect(r1.content.split('\n')[0]).toBe(ssh.CORRAL_TEST_SSH_USER);
      expect(events(plain).some((e) => e.type === 'hand.taken_from_pool')).toBe(true);
      // The pooled login was made ahead for no session; the session that took the hand has it in its ledger.
      expect(events(plain).find((e) => e.type === 'vault.credential_used')).toMatchObject({ vault_id: fallback, purpose: 'ssh' });
      await host.hands.release(plain, 'main');
      await until(() => poolOf(sshEnv)?.ready === 1, 'the pool refilled');
      // A session with a key of its own for the host: the pooled hand stays in the pool.
      const own = session([ownKeys]);
      const r2 = await host.hands.execute(own, undefined, 'bash', { command: 'id -un' });
      expect(r2.content.split('\n')[0]).toBe(ssh.CORRAL_TEST_SSH_USER);
      expect(events(own).some((e) => e.type === 'hand.taken_from_pool')).toBe(false);
      expect(events(own).find((e) => e.type === 'vault.credential_used')).toMatchObject({ vault_id: ownKeys });
      expect(poolOf(sshEnv)).toMatchObject({ ready: 1, misses: 1, taken: 1 });
      await host.hands.release(own, 'main');
    });
  }, 180_000);

  it('a docker hand whose provisioning fails after its container started is removed', async () => {
    const label = `pool-fail-${process.pid}`;
    const env = host.environments.create({ name: label, config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST } as never, metadata: {}, description: null }).id;
    const engine = new Docker({ socketPath: docker.CORRAL_TEST_DOCKER_HOST!.replace(/^unix:\/\//, '') });
    const mine = async () => (await engine.listContainers({ all: true, filters: { label: ['corral.hand=1'] } })).filter((c) => c.Labels['corral.label']?.startsWith(id)).length;
    // The hand's variables cannot be had (the vault failing, say): after the container is up.
    const handEnv = (host.hands as unknown as { opts: { handEnv: { envFor: (...a: unknown[]) => Promise<unknown> } } }).opts.handEnv;
    const envFor = handEnv.envFor;
    handEnv.envFor = async () => {
      throw new Error('no variables today');
    };
    const id = host.log.createSession({ environment_id: env, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] } } }).session.id;
    try {
      const r = await host.hands.execute(id, undefined, 'bash', { command: 'true' });
      expect(r.isError).toBe(true);
      expect(String(events(id).find((e) => e.type === 'hand.lost')?.reason)).toContain('no variables today');
    } finally {
      handEnv.envFor = envFor;
    }
    for (let i = 0; i < 100 && (await mine()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await mine()).toBe(0);
  }, 120_000);
});
