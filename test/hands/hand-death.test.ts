import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoggedEvent } from '../../main/session/types';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';

/**
 * A hand that dies mid-command, through a whole session: the call becomes an error result within
 * 5 s, the session goes on, and the next call gets a fresh hand from the recipe.
 */
let t: BrainTestHost;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let adb: Record<string, string>;
beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  adb = handsEnv('adb');
  t = await startBrainHost(scriptFor);
}, 180_000);
afterAll(() => t?.close());

function scriptFor(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo started; sleep 30' } }] };
  if (results === 1) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo alive again' } }] };
  return { blocks: [{ type: 'text', text: 'carried on' }] };
}

async function runAndKill(
  environmentId: string,
  kill: (sessionId: string) => Promise<void> | void,
  afterError: () => void = () => {},
): Promise<{ events: LoggedEvent[]; errorAfterMs: number }> {
  const { session } = t.host.log.createSession({ environment_id: environmentId, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] } } });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'run something long' }] });
  while (!t.events(session.id).some((e) => e.type === 'hand.ready')) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 500)); // the command is running
  const killedAt = Date.now();
  await kill(session.id);
  while (!t.events(session.id).some((e) => e.type === 'agent.tool_result')) await new Promise((r) => setTimeout(r, 20));
  const errorAfterMs = Date.now() - killedAt;
  afterError();
  return { events: await t.settled(session.id, 60_000), errorAfterMs };
}

function expectRecovered(events: LoggedEvent[], errorAfterMs: number) {
  const results = events.filter((e) => e.type === 'agent.tool_result');
  expect(results[0]!.is_error).toBe(true);
  expect(textOf(results[0])).toMatch(/lost|gone/);
  expect(errorAfterMs).toBeLessThan(5000);
  expect(results[1]!.is_error).toBe(false);
  expect(textOf(results[1])).toContain('alive again');
  // The replacement's shell is a fresh one, and its first result says the old one's state is gone.
  expect(textOf(results[1])).toMatch(/^\[a fresh shell: the hand was lost \(.+\) and replaced; its working folder, variables and background jobs are gone\]\nalive again\n/);
  // The lifecycle (progress steps while provisioning are not part of it).
  const lifecycle = events.filter((e) => e.type.startsWith('hand.') && e.type !== 'hand.provisioning_progress').map((e) => e.type);
  expect(lifecycle).toEqual(['hand.provisioning', 'hand.ready', 'hand.lost', 'hand.provisioning', 'hand.ready']);
  expect(textOf(events.filter((e) => e.type === 'agent.message').at(-1))).toBe('carried on');
  console.log(`hand death → error result after ${errorAfterMs} ms`);
}

describe('a hand that dies mid-command', () => {
  it('docker: the container is killed', async () => {
    const env = t.host.environments.create({ name: 'box', config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST }, metadata: {}, description: null });
    const engine = new Docker({ socketPath: docker.CORRAL_TEST_DOCKER_HOST!.replace('unix://', '') });
    let killed = '';
    const { events, errorAfterMs } = await runAndKill(env.id, async (sessionId) => {
      // This session's container only: other test files run containers on the same engine.
      const list = await engine.listContainers({ filters: { label: [`corral.label=${sessionId}/main`] } });
      const mine = list.find((c) => c.State === 'running');
      killed = mine!.Id;
      await engine.getContainer(mine!.Id).kill();
    });
    expectRecovered(events, errorAfterMs);
    expect(killed).not.toBe('');
  }, 120_000);

  it('ssh: the host dies (every process of its network namespace killed)', async () => {
    const nsHost = ssh.CORRAL_TEST_SSH_NS_HOST;
    const script = path.resolve(__dirname, '../hands-env/ssh.sh');
    const config = nsHost
      ? { type: 'ssh', host: nsHost, port: Number(ssh.CORRAL_TEST_SSH_NS_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY }
      : { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY };
    const env = t.host.environments.create({ name: 'pi', config, metadata: {}, description: null });
    // ssh-*.test.ts kill, freeze and cut the same hosts: not at the same time.
    const { events, errorAfterMs } = await withBackendTurn('ssh', () =>
      runAndKill(env.id, () => {
        execFileSync('bash', [script, nsHost ? 'kill-ns' : 'kill-sessions'], { stdio: 'ignore' });
        // The host comes back (a reboot): the next call's fresh hand connects to it.
        execFileSync('bash', [script, 'start'], { stdio: 'ignore' });
      }),
    );
    expectRecovered(events, errorAfterMs);
  }, 120_000);

  it('adb: the device dies (its daemon killed); plugged in again, the next call gets a fresh hand', async () => {
    const script = path.resolve(__dirname, '../hands-env/adb.sh');
    const serial = adb.CORRAL_TEST_ADB_SERIAL2!;
    // The model takes a few seconds over its next call, time enough to plug the device in again.
    t.model.setScript((req) => {
      const reply = scriptFor(req);
      return 'blocks' in reply && JSON.stringify(reply).includes('alive again') ? { ...reply, firstTokenDelayMs: 4000 } : reply;
    });
    const env = t.host.environments.create({ name: 'phone', config: { type: 'adb', serial, adb_port: Number(adb.ANDROID_ADB_SERVER_PORT) }, metadata: {}, description: null });
    // adb-*.test.ts kill and revive the same device (and the server): not at the same time.
    const { events, errorAfterMs } = await withBackendTurn('adb', () =>
      runAndKill(env.id, () => {
        process.kill(Number(fs.readFileSync(adb.CORRAL_TEST_ADB_PIDFILE2!, 'utf8').trim()), 'SIGKILL');
      }, () => execFileSync('bash', [script, 'revive', serial.split(':')[1]!], { stdio: 'ignore' })),
    );
    expectRecovered(events, errorAfterMs);
    t.model.setScript(scriptFor);
  }, 120_000);
});
