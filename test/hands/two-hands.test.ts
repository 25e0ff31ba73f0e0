import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { backendTurn, handsEnv } from '../helpers/hands-env';

let t: BrainTestHost;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let releaseTurn: (() => void) | undefined;
beforeAll(async () => {
  releaseTurn = await backendTurn('ssh'); // ssh-*.test.ts kill and freeze the SSH hosts
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  t = await startBrainHost(script);
}, 180_000);
afterAll(async () => {
  await t?.close();
  releaseTurn?.();
});

/** The model: on its first turn works on both hands; a borrower reads what was left on the box. */
function script(req: RecordedRequest): Reply {
  const first = JSON.stringify(req.body.messages[0].content);
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  if (first.includes('use both')) {
    if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'whoami; echo from-ssh > where.txt', hand: 'main' } }] };
    if (results === 1) return { blocks: [{ type: 'tool_use', name: 'write', input: { file_path: 'note.txt', content: 'left in the container', hand: 'box' } }] };
    if (results === 2) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'cat /work/note.txt; echo; ls /sys/class/net', hand: 'box' } }] };
    return { blocks: [{ type: 'text', text: 'done with both' }] };
  }
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'read', input: { file_path: 'note.txt', hand: 'borrowed' } }] };
  return { blocks: [{ type: 'text', text: 'read the borrowed box' }] };
}

describe('two hands in one session, and a hand passed on', () => {
  it('an SSH host and a container serve one session; the container moves to another session live', async () => {
    const sshEnv = t.host.environments.create({
      name: 'pi',
      config: { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY },
      metadata: {},
      description: null,
    });
    const boxEnv = t.host.environments.create({
      name: 'box',
      config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST },
      metadata: {},
      description: null,
    });
    const agent = { model: { id: 'm' }, system: null, tools: [{ type: 'agent_toolset_20260401' }] };
    const { session: a } = t.host.log.createSession({ environment_id: sshEnv.id, record: { agent } });
    t.host.hands.attach(a.id, boxEnv.id, 'box');
    t.host.log.emitEvent(a.id, { type: 'user.message', content: [{ type: 'text', text: 'use both hands' }] });
    const events = await t.settled(a.id, 60_000);

    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results.map((r) => r.is_error)).toEqual([false, false, false]);
    expect(textOf(results[0])).toContain(ssh.CORRAL_TEST_SSH_USER);
    expect(textOf(results[2])).toContain('left in the container');
    // The container has only loopback (network none).
    expect(textOf(results[2])).toMatch(/^lo$/m);
    expect(textOf(results[2])).not.toMatch(/eth0/);
    const ready = events.filter((e) => e.type === 'hand.ready');
    expect(ready.map((e) => [e.hand, e.kind])).toEqual([
      ['main', 'ssh'],
      ['box', 'docker'],
    ]);
    // A host never seen before: its key was remembered in the data folder, and the log says so.
    expect(ready[0]!.host_key).toMatchObject({ type: 'ssh-ed25519', known: false, first_seen: true });
    const hostKey = fs.readFileSync(ssh.CORRAL_TEST_SSH_HOST_PUBKEY!, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
    expect(fs.readFileSync(path.join(t.dataDir, 'ssh', 'known_hosts'), 'utf8')).toBe(`[${ssh.CORRAL_TEST_SSH_HOST}]:${ssh.CORRAL_TEST_SSH_PORT} ${hostKey}\n`);
    // The tools offered the model both hands by name.
    const bash = t.model.requests[0]!.body.tools.find((x: { name: string }) => x.name === 'bash');
    expect(bash.input_schema.properties.hand.enum).toEqual(['main', 'box']);
    expect(bash.description).toMatch(/box: docker/);

    // Pass the live container to another session.
    const { session: b } = t.host.log.createSession({ environment_id: sshEnv.id, record: { agent } });
    t.host.hands.handOver(a.id, 'box', b.id, 'borrowed');
    t.host.log.emitEvent(b.id, { type: 'user.message', content: [{ type: 'text', text: 'read the note on the borrowed box' }] });
    const bEvents = await t.settled(b.id, 60_000);
    expect(textOf(bEvents.find((e) => e.type === 'agent.tool_result'))).toContain('left in the container');
    // Same container, not a new one: no provisioning in the borrower's log.
    expect(bEvents.filter((e) => e.type === 'hand.provisioning')).toEqual([]);
    expect(t.events(a.id).find((e) => e.type === 'hand.handed_over')).toMatchObject({ hand: 'box', to_session_id: b.id });
    expect(bEvents.find((e) => e.type === 'hand.received')).toMatchObject({ hand: 'borrowed', from_session_id: a.id });
    expect(t.host.hands.list(a.id).map((h) => h.name)).toEqual(['main']);
  }, 120_000);
});
