import { setImmediate as nextTurn } from 'node:timers/promises';
import { LogFold, type LogAnalysis } from '../../../brain/analyse';
import { HAND_MEMBERSHIP_EVENTS, MAIN_HAND } from '../../../hands/membership';
import type { Host } from '../../../host';
import type { ForkPreview, SessionSummary } from '../contract';
import type { HostCalls } from '../service';
import { summarise } from '../service';
import { missing, refuse } from './errors';
import { handsOf } from './sessions';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * What forking at a position means, said before it happens: what is kept, what the brain will
 * do once the fork has work (from the same `analyse` the brain runs), and what is not rewound.
 */
export async function previewFork(host: Pick<Host, 'log'>, sessionId: string, atSeq: number, withMessage: boolean): Promise<ForkPreview> {
  const session = host.log.getSession(sessionId);
  if (atSeq > session.last_seq) throw refuse(`position ${atSeq} is past the session's last event (#${session.last_seq})`);
  const a = await analyseThrough(host.log, sessionId, atSeq);
  const shared = atSeq === 0 ? 'No event is shared' : atSeq === 1 ? 'Event 1 is shared' : `Events 1–${atSeq} are shared`;
  const lines = [`${shared} with the fork; this session stays exactly as it is, and nothing after #${atSeq} is copied.`];
  if (a.openRequest) lines.push(`A model request was in flight at #${atSeq}: the fork closes it as abandoned and sends it again.`);
  if (a.unansweredToolUses.length) {
    const names = a.unansweredToolUses.map((e) => String(e.name)).join(', ');
    lines.push(`${plural(a.unansweredToolUses.length, 'tool call')} had no result at #${atSeq} (${names}): the fork answers them "outcome unknown"; they are not run again.`);
  }
  if (a.interruptPending) lines.push('An interrupt was pending there: the fork closes that turn without running anything.');
  if (withMessage) lines.push('Your message is added after them and the model is asked again: the tool calls it makes then run on the fork\'s hands.');
  else if (a.needsModel) lines.push(`At #${atSeq} the model had input it had not answered: nothing runs until you send the fork a message; then the model is asked again with it.`);
  else lines.push('Nothing runs in the fork until you send it a message.');
  lines.push("Hands are not rewound: the fork's hands are provisioned fresh when first used (a local hand gets a new, empty work folder; a remote machine keeps whatever is on it now).");
  return {
    at_seq: atSeq,
    status_at: a.status,
    will_run: lines,
    unanswered_tool_calls: a.unansweredToolUses.map((e) => ({ id: e.id, name: String(e.name), seq: e.seq })),
    open_request: a.openRequest !== undefined,
    needs_model: a.needsModel,
  };
}

/** Events a page of the fold reads at a time: a few milliseconds of the loop, then a turn for others. */
const FOLD_PAGE = 2000;

/**
 * `analyse` of events 1..atSeq, read and folded a page at a time with a turn of the event loop
 * between pages: a 100k-event session must not hold up every other session while it is read.
 */
async function analyseThrough(log: Host['log'], sessionId: string, atSeq: number): Promise<LogAnalysis> {
  const fold = new LogFold();
  for (let after = 0; ; ) {
    const page = log.getEvents(sessionId, { after, to: atSeq, limit: FOLD_PAGE });
    for (const e of page) fold.fold(e);
    if (page.length < FOLD_PAGE) return fold.analysis();
    after = page[page.length - 1]!.seq;
    await nextTurn();
  }
}

/** Fork calls: the preview, and the fork itself (optionally on another environment, with more hands and a message). */
export function forkCalls(host: Pick<Host, 'log' | 'environments' | 'hands'>): Pick<HostCalls, 'previewFork' | 'forkSession'> {
  const { log } = host;
  const usable = (id: string, what: string) => {
    const env = host.environments.get(id);
    if (!env) throw missing('environment', id);
    if (env.archived_at) throw refuse(`environment '${id}' (${what}) is archived`);
  };
  return {
    previewFork: ({ sessionId, atSeq, withMessage }) => previewFork(host, sessionId, atSeq, withMessage ?? false),
    forkSession: async ({ sessionId, fork, environmentId, hands, message }): Promise<SessionSummary> => {
      const parent = log.getSession(sessionId);
      let at = fork.at_seq ?? parent.last_seq;
      if (fork.at_event_id !== undefined) {
        const event = log.findEvent(sessionId, fork.at_event_id);
        if (!event) throw missing('event', fork.at_event_id);
        at = event.seq;
      }
      if (at > parent.last_seq) throw refuse(`fork point must be a position from 0 to ${parent.last_seq}, got ${at}`);
      // Everything is checked before anything is written: a refused fork leaves no half-made session.
      if (environmentId) usable(environmentId, 'main hand');
      const held = new Set([MAIN_HAND]);
      for (const e of log.getEventsOfTypes(sessionId, HAND_MEMBERSHIP_EVENTS, { to: at, limit: 100_000 })) {
        if (e.type === 'hand.attached' || e.type === 'hand.received') held.add(String(e.hand));
        else held.delete(String(e.hand));
      }
      for (const h of hands ?? []) {
        usable(h.environment_id, `hand '${h.name}'`);
        if (held.has(h.name)) throw refuse(`the fork already has a hand named '${h.name}'`);
        held.add(h.name);
      }
      // The environments are checked again as the fork is written: the loop turns while its usage is read.
      const envsStillUsable = () => {
        if (environmentId) usable(environmentId, 'main hand');
        for (const h of hands ?? []) usable(h.environment_id, `hand '${h.name}'`);
      };
      const child = await log.forkSessionPaged(sessionId, at, environmentId ? { environment_id: environmentId } : {}, envsStillUsable);
      const title = fork.title ?? `${typeof parent.record.title === 'string' && parent.record.title ? parent.record.title : parent.id} · fork at #${at}`;
      log.updateSessionRecord(child.id, (r) => ({ ...r, title }));
      for (const h of hands ?? []) host.hands.attach(child.id, h.environment_id, h.name);
      if (message) log.emitEvent(child.id, { ...message });
      return summarise(log.getSession(child.id), (id) => handsOf(host, id), log);
    },
  };
}
