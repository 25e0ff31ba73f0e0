import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest } from '../../main/brain/context';
import type { LoggedEvent } from '../../main/session/types';
import { validateMessagesRequest, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';

/** The model: run one command that leaves a trace, then finish. Answers follow the transcript. */
function script(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: { type: string }[] }[];
  const last = messages[messages.length - 1]!;
  const sawResult = last.content.some((b) => b.type === 'tool_result');
  if (!sawResult) {
    return {
      blocks: [
        { type: 'text', text: 'Running the command.' },
        { type: 'tool_use', name: 'bash', input: { command: 'echo ran >> runs.log; sleep 0.3; echo ok' } },
      ],
      chunkDelayMs: 3,
    };
  }
  return { blocks: [{ type: 'text', text: 'All done.' }], chunkDelayMs: 3 };
}

/** Checks one session's final log: whole, without duplicates, a valid transcript. */
function checkTranscript(events: LoggedEvent[], workDir: string) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  const toolUses = events.filter((e) => e.type === 'agent.tool_use');
  for (const tu of toolUses) {
    expect(events.filter((e) => e.type === 'agent.tool_result' && e.tool_use_id === tu.id)).toHaveLength(1);
  }
  const starts = events.filter((e) => e.type === 'span.model_request_start');
  const ends = events.filter((e) => e.type === 'span.model_request_end');
  expect(ends.map((e) => e.model_request_start_id).sort()).toEqual(starts.map((s) => s.id).sort());
  expect(events[events.length - 1]!.type).toBe('session.status_idle');
  // Blocks of one response were logged once each.
  const blockKeys = events.filter((e) => e.type === 'agent.message' || e.type === 'agent.tool_use').map((e) => JSON.stringify([e.type, e.content ?? e.input]));
  const perResponse = new Set<string>();
  let current = '';
  for (const e of events) {
    if (e.type === 'span.model_request_start') current = e.id;
    if (e.type === 'agent.message' || e.type === 'agent.tool_use') {
      const k = `${current}|${JSON.stringify(e.content ?? e.input)}`;
      expect(perResponse.has(k), `duplicate block in ${current}`).toBe(false);
      perResponse.add(k);
    }
  }
  expect(blockKeys.length).toBeGreaterThan(0);
  // A command runs at most once per logged call: never silently twice.
  const runs = fs.existsSync(path.join(workDir, 'runs.log')) ? fs.readFileSync(path.join(workDir, 'runs.log'), 'utf8').trim().split('\n').length : 0;
  expect(runs).toBeLessThanOrEqual(toolUses.length);
  // The whole log still makes a valid Messages request (with one more user turn).
  const built = buildRequest([...events, { id: 'sevt_next', type: 'user.message', processed_at: '', seq: events.length + 1, content: [{ type: 'text', text: 'next' }] }], {
    model: 'm',
    system: 's',
    tools: [],
    maxTokens: 100,
    contextWindowTokens: 200_000,
  });
  expect(validateMessagesRequest(built.params)).toBeNull();
}

const PHASES = [
  { name: 'start-up', after: 'user.message', jitterMs: 400 },
  { name: 'mid-stream', after: 'span.model_request_start', jitterMs: 30 },
  { name: 'tool running', after: 'agent.tool_use', jitterMs: 250 },
  { name: 'after an append', after: 'span.model_request_end', jitterMs: 5 },
  { name: 'after a result', after: 'agent.tool_result', jitterMs: 5 },
];

async function waitForType(id: string, type: string, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (!t.events(id).some((e) => e.type === type) && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
}

let t: BrainTestHost;
beforeAll(async () => {
  t = await startBrainHost(script);
});
afterAll(() => t.close());

describe('kill -9 of the brain', () => {
  it('50 runs killed at random moments all finish with a valid transcript', async () => {
    const runs = 50;
    const parallel = 5;
    let killsThatHit = 0;
    const phasesHit = new Map<string, number>();
    const outcomes: string[] = [];
    for (let batch = 0; batch < runs / parallel; batch++) {
      await Promise.all(
        Array.from({ length: parallel }, async (_, j) => {
          const id = t.newSession(`run ${batch * parallel + j}`);
          // A random moment of the turn: brain start-up, mid-stream, between a tool call and
          // its result, right after an append; sometimes a second kill of the new brain.
          const kills = Math.random() < 0.3 ? 2 : 1;
          for (let k = 0; k < kills; k++) {
            const phase = PHASES[Math.floor(Math.random() * PHASES.length)]!;
            await waitForType(id, phase.after, 10_000);
            await new Promise((r) => setTimeout(r, Math.random() * phase.jitterMs));
            const pid = t.host.brains!.pidOf(id);
            if (pid) {
              try {
                process.kill(pid, 'SIGKILL');
                killsThatHit++;
                phasesHit.set(phase.name, (phasesHit.get(phase.name) ?? 0) + 1);
              } catch {
                // already gone
              }
            }
          }
          const events = await t.settled(id, 30_000);
          checkTranscript(events, t.host.hands.workDirOf(id));
          outcomes.push(events.some((e) => (e.details as { outcome?: string } | undefined)?.outcome === 'unknown') ? 'unknown-outcome' : 'clean');
        }),
      );
    }
    console.log(
      `crash test: ${killsThatHit} kills hit a live brain (${[...phasesHit].map(([p, n]) => `${p} ${n}`).join(', ')}); ` +
        `${outcomes.filter((o) => o === 'unknown-outcome').length} runs had a tool call of unknown outcome`,
    );
    expect(killsThatHit).toBeGreaterThanOrEqual(runs / 2);
  }, 300_000);
});

describe('restart of the whole host mid-turn', () => {
  it('resumes the session by itself', async () => {
    t.model.setScript((req, i) => (i === 0 ? { blocks: [{ type: 'text', text: 'slow answer' }], firstTokenDelayMs: 1500 } : script(req)));
    const id = t.newSession('survive a host crash');
    while (!t.events(id).some((e) => e.type === 'span.model_request_start')) await new Promise((r) => setTimeout(r, 10));
    await t.stopHost(); // brains killed, nothing finished
    await t.restartHost();
    const events = await t.settled(id, 20_000);
    checkTranscript(events, t.host.hands.workDirOf(id));
    // The request in flight when the host died was closed as abandoned, then sent again.
    expect(events.filter((e) => e.type === 'span.model_request_end')[0]).toMatchObject({ is_error: true });
    expect(events.filter((e) => e.type === 'agent.message').length).toBeGreaterThan(0);
  }, 60_000);
});
