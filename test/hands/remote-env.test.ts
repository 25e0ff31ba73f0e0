/**
 * Remote hands (SSH host, container, device) get nothing of the host's environment: their
 * commands see the remote side's own environment plus what the environment config sets (`env`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';

const PLANTED = {
  CORRAL_API_KEY: 'planted-corral-key-5f1c',
  DATABASE_URL: 'postgres://app:planted-hunter2@db.example/app',
  GH_PAT: 'planted-gh-pat-77aa',
  AWS_SESSION_CREDENTIALS: 'planted-aws-session-0b9e',
};

let host: Host;
const saved = { ...process.env };
beforeAll(() => {
  Object.assign(process.env, PLANTED);
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
});
afterAll(async () => {
  await host?.close();
  for (const k of Object.keys(PLANTED)) delete process.env[k];
  Object.assign(process.env, saved);
});

async function envOn(config: Record<string, unknown>): Promise<string> {
  const env = host.environments.create({ name: String(config.type), config: { ...config, env: { CORRAL_GREETING: "it's set" } }, metadata: {}, description: null });
  const { session } = host.log.createSession({ environment_id: env.id, record: { agent: { model: { id: 'm' } } } });
  try {
    const r = await host.hands.execute(session.id, undefined, 'bash', { command: 'env; echo "greeting=$CORRAL_GREETING"' });
    expect(r.isError, r.content).toBe(false);
    return r.content;
  } finally {
    await host.hands.release(session.id, 'main');
  }
}

function expectClean(out: string): void {
  expect(out).toContain("greeting=it's set");
  for (const value of Object.values(PLANTED)) expect(out).not.toContain(value);
  expect(out).not.toMatch(/planted-/);
}

describe('remote hands get nothing of the host environment', () => {
  it('ssh', async () => {
    const ssh = handsEnv('ssh');
    const out = await withBackendTurn('ssh', () =>
      envOn({ type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY }),
    );
    expectClean(out);
  }, 60_000);

  it('docker', async () => {
    const docker = handsEnv('docker');
    expectClean(await envOn({ type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST }));
  }, 60_000);

  it('adb', async () => {
    const adb = handsEnv('adb');
    const out = await withBackendTurn('adb', () => envOn({ type: 'adb', serial: adb.CORRAL_TEST_ADB_SERIAL!, adb_port: Number(adb.ANDROID_ADB_SERVER_PORT) }));
    expectClean(out);
  }, 60_000);
});
