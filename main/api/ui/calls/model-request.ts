import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentConfigOf, READ_SESSION_TOOL } from '../../../brain/agent-config';
import { buildRequest } from '../../../brain/context';
import { builtinToolDefinitions } from '../../../brain/tool-definitions';
import type { HandInfo } from '../../../hands/registry';
import { WorkerPool } from '../../../hands/local/off-loop/pool';
import type { Host } from '../../../host';
import type { SessionLog } from '../../../session/store';
import type { LoggedEvent } from '../../../session/types';
import { LogInputError } from '../../../session/types';
import { spawnWorkerThread } from '../../../worker-thread';
import type { ModelRequestView } from '../contract';

const PAGE = 5000;

/** The session's events 1..atSeq, read a page at a time. */
export function eventsThrough(log: SessionLog, sessionId: string, atSeq: number): LoggedEvent[] {
  const out: LoggedEvent[] = [];
  for (;;) {
    const page = log.getEvents(sessionId, { after: out[out.length - 1]?.seq ?? 0, to: atSeq, limit: PAGE });
    out.push(...page);
    if (page.length < PAGE) return out;
  }
}

/** Everything a model request is built from besides the log: plain data, sent to a worker thread. */
export interface ModelRequestJob {
  /** The database file the worker reads (read-only). */
  dbFile: string;
  sessionId: string;
  atSeq: number;
  /** The session's agent snapshot. */
  agent: Record<string, unknown> | undefined;
  /** The hands the session holds now (a hand's description is not in the log). */
  hands: HandInfo[];
}

/** Checks the call against the log (unknown session, seq past the end) and gathers the job. */
export function modelRequestJob(host: Pick<Host, 'log' | 'hands'>, sessionId: string, atSeq: number): ModelRequestJob {
  const session = host.log.getSession(sessionId);
  if (atSeq > session.last_seq) throw new LogInputError(`at_seq ${atSeq} is past the session's last event (#${session.last_seq})`);
  return { dbFile: host.log.file, sessionId, atSeq, agent: session.record.agent as Record<string, unknown> | undefined, hands: host.hands.list(sessionId) };
}

/**
 * The Messages request the brain would build from the log up to `atSeq`: the real, pure
 * `buildRequest` with the session's agent snapshot and the tool definitions its brain uses.
 * Reads the whole log up to `atSeq`: run it in a worker thread (modelRequestAt), never on the loop.
 */
export function buildModelRequestView(log: SessionLog, job: ModelRequestJob): ModelRequestView {
  const cfg = agentConfigOf(job.agent);
  const tools = [...builtinToolDefinitions(cfg.builtinTools, job.hands), ...cfg.customTools, READ_SESSION_TOOL];
  const built = buildRequest(eventsThrough(log, job.sessionId, job.atSeq), {
    model: cfg.model,
    system: cfg.system,
    tools,
    maxTokens: cfg.maxTokens,
    contextWindowTokens: cfg.contextWindowTokens,
  });
  return {
    session_id: job.sessionId,
    at_seq: job.atSeq,
    context_seq: built.contextSeq,
    params: built.params as ModelRequestView['params'],
    elided_seqs: built.elidedSeqs,
    ...(built.droppedThrough !== undefined ? { dropped_through: built.droppedThrough } : {}),
    estimated_tokens: built.estimatedTokens,
    note: `Built by the brain's buildRequest from events 1–${job.atSeq} with the session's agent (${cfg.model}); tools as the session's hands are now: ${job.hands.map((h) => `${h.name} (${h.kind})`).join(', ') || 'none'}.`,
  };
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** Name of the built worker entry (electron.vite.config.ts builds it next to the host's code). */
export const BUILT_MODEL_REQUEST_WORKER = 'model-request-worker.js';

/** One thread at a time: a request view is a rare, user-driven call (opening a slice). */
const pool = new WorkerPool({
  name: 'model request',
  spawn: () => spawnWorkerThread(import.meta.url, path.join(here, 'model-request-worker.ts'), path.join(here, BUILT_MODEL_REQUEST_WORKER)),
  maxWorkers: 1,
  idleMs: 30_000,
});

/**
 * The model request at `atSeq`, built in a worker thread: a 100k-event session takes about half
 * a second to read and build, which on the host's loop would stall every session and the UI.
 */
export async function modelRequestAt(host: Pick<Host, 'log' | 'hands'>, sessionId: string, atSeq: number): Promise<ModelRequestView> {
  return (await pool.run(modelRequestJob(host, sessionId, atSeq))) as ModelRequestView;
}
