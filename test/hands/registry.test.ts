import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('hands of a session', () => {
  it('are provisioned lazily, take a hand argument when there are several, and can be handed over live', async () => {
    // A local environment's working_dir must lie in the folders the host allows.
    const allowed = tmpDir();
    const otherDir = path.join(allowed, 'other');
    t = await startBrainHost((req, i) => {
      if (i === 0) {
        // Several hands: every built-in tool takes a required `hand` naming them.
        const bash = req.body.tools.find((x: { name: string }) => x.name === 'bash');
        expect(bash.input_schema.properties.hand.enum).toEqual(['main', 'second']);
        expect(bash.input_schema.required).toContain('hand');
        expect(bash.description).toContain('second: this machine, folder');
        return { blocks: [{ type: 'tool_use', name: 'write', input: { file_path: 'on-second.txt', content: 'two', hand: 'second' } }] };
      }
      if (i === 1) return { blocks: [{ type: 'tool_use', name: 'write', input: { file_path: 'on-main.txt', content: 'one', hand: 'main' } }] };
      return { blocks: [{ type: 'text', text: 'ok' }] };
    }, { hostOptions: { allowedWorkRoots: [allowed] } });
    const second = t.host.environments.create({ name: 'second', config: { type: 'local', working_dir: otherDir }, metadata: {}, description: null });
    const id = t.newSession('use both hands');
    // Nothing provisioned at session start.
    expect(t.events(id).filter((e) => e.type.startsWith('hand.'))).toEqual([]);
    t.host.hands.attach(id, second.id, 'second');
    const events = await t.settled(id);
    expect(fs.readFileSync(path.join(otherDir, 'on-second.txt'), 'utf8')).toBe('two');
    expect(fs.readFileSync(path.join(t.host.hands.workDirOf(id), 'on-main.txt'), 'utf8')).toBe('one');
    const handEvents = events.filter((e) => e.type.startsWith('hand.')).map((e) => `${e.type}:${e.hand}`);
    expect(handEvents).toEqual(['hand.attached:second', 'hand.provisioning:second', 'hand.ready:second', 'hand.provisioning:main', 'hand.ready:main']);
    expect(events.filter((e) => e.type === 'agent.tool_result').map((e) => (e.details as { hand: string }).hand)).toEqual(['second', 'main']);

    // Hand the live 'second' over to another session.
    const other = t.newSession('borrower');
    await t.settled(other);
    t.host.hands.handOver(id, 'second', other, 'borrowed');
    expect(t.host.hands.list(id).map((h) => h.name)).toEqual(['main']);
    expect(t.host.hands.list(other).map((h) => h.name)).toEqual(['main', 'borrowed']);
    expect(t.events(id).at(-1)).toMatchObject({ type: 'hand.handed_over', hand: 'second', to_session_id: other });
    expect(t.events(other).at(-1)).toMatchObject({ type: 'hand.received', hand: 'borrowed', from_session_id: id });
    // The receiver uses the same live hand: no new provisioning.
    const out = await t.host.hands.execute(other, 'borrowed', 'read', { file_path: 'on-second.txt' });
    expect(out.content).toContain('two');
    expect(t.events(other).filter((e) => e.type === 'hand.provisioning')).toEqual([]);
    // The giver no longer reaches it.
    const gone = await t.host.hands.execute(id, 'second', 'read', { file_path: 'on-second.txt' });
    expect(gone).toMatchObject({ isError: true });
    expect(gone.content).toMatch(/no hand named 'second'/);

    await t.host.hands.release(other, 'borrowed');
    expect(t.host.hands.list(other).map((h) => h.name)).toEqual(['main']);
  });

  it('reports a hand that cannot be provisioned as an error result, and the session goes on', async () => {
    t = await startBrainHost([
      { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }] },
      { blocks: [{ type: 'text', text: 'I could not run it.' }] },
    ]);
    const env = t.host.environments.create({ name: 'cloudy', config: { type: 'cloud' }, metadata: {}, description: null });
    const id = t.newSession('run on an unsupported hand');
    // No API moves a session to another environment; the database can, as a stale record would.
    const db = new Database(path.join(t.host.dataDir, 'corral.sqlite'));
    db.prepare('UPDATE sessions SET environment_id = ? WHERE id = ?').run(env.id, id);
    db.close();
    const events = await t.settled(id);
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/cannot run here/);
    expect(events.find((e) => e.type === 'hand.lost')!.reason).toMatch(/provisioning failed/);
    expect(events.at(-1)!.type).toBe('session.status_idle');
  });

  it('clones the session\'s repository (at its branch) into the hand as it is provisioned', async () => {
    const repo = tmpDir();
    const git = (args: string, cwd = repo) => execSync(`git ${args}`, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    git('init --quiet -b main');
    fs.writeFileSync(path.join(repo, 'README'), 'on main\n');
    git('add README');
    git('commit --quiet -m one');
    git('checkout --quiet -b dev');
    fs.writeFileSync(path.join(repo, 'README'), 'on dev\n');
    git('commit --quiet -am two');
    t = await startBrainHost([
      { blocks: [{ type: 'tool_use', name: 'read', input: { file_path: 'proj/README' } }] },
      { blocks: [{ type: 'text', text: 'read it' }] },
    ]);
    const env = t.host.environments.create({ name: 'l', config: { type: 'local' }, metadata: {}, description: null });
    const { session } = t.host.log.createSession({
      environment_id: env.id,
      record: {
        agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
        resources: [{ id: 'sesrsc_1', type: 'github_repository', url: `file://${repo}`, checkout: { type: 'branch', name: 'dev' }, mount_path: '/workspace/proj' }],
      },
    });
    t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'read the readme' }] });
    const events = await t.settled(session.id);
    const applied = events.find((e) => e.type === 'hand.resource_applied')!;
    expect(applied).toMatchObject({ hand: 'main', path: 'proj', resource_id: 'sesrsc_1' });
    expect(applied.seq).toBeLessThan(events.find((e) => e.type === 'hand.ready')!.seq);
    expect(JSON.stringify(events.find((e) => e.type === 'agent.tool_result')!.content)).toContain('on dev');
  });

  it('keeps an output too long for the model whole, outside the log', async () => {
    t = await startBrainHost([
      { blocks: [{ type: 'tool_use', name: 'bash', input: { command: "head -c 20000000 /dev/zero | tr '\\0' a" } }] },
      { blocks: [{ type: 'text', text: 'big' }] },
    ]);
    const id = t.newSession('print 20 MB');
    const events = await t.settled(id);
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    const stored = JSON.stringify(result);
    expect(stored.length).toBeLessThan(40_000);
    expect(stored).toContain('characters cut here');
    const full = (result.details as { full_output: { file: string; chars: number } }).full_output;
    expect(full.chars).toBeGreaterThanOrEqual(20_000_000);
    expect(fs.statSync(path.join(t.dataDir, 'outputs', id, full.file)).size).toBeGreaterThanOrEqual(20_000_000);
    // The next model request stayed small.
    expect(JSON.stringify(t.model.requests[1]!.body).length).toBeLessThan(60_000);
  });
});
