import type { Host } from '../../host';
import { workerResultKey } from '../../hands/dial-in/call';

type Call = { type: string; id: string; input?: unknown };

/**
 * Whether a worker attached to a session may see this event. The SDK's runner executes every
 * `agent.tool_use` it sees (and counts only `user.tool_result` as an answer), so it is shown only
 * the calls meant for a `self_hosted` hand of the session (a call names its hand with `hand`
 * when the session holds several), none while its item winds down, and, in lists, none that already have a result (the host
 * answered it after a lost lease or an interrupt: running it again would repeat it).
 */
export function workerMaySee(host: Host, sessionId: string, e: Call, opts: { answeredToo: boolean; workId?: string }): boolean {
  if (e.type !== 'agent.tool_use') return true;
  if (opts.workId) {
    // A worker told to stop (an interrupt, a timeout) takes no new calls while it winds down:
    // they wait for the next item, so two runners never hold one session.
    const state = host.dialIn.work.get(opts.workId)?.state;
    if (state !== 'starting' && state !== 'active') return false;
  }
  const hands = host.hands.list(sessionId);
  const named = (e.input as { hand?: unknown } | undefined)?.hand;
  const target = typeof named === 'string' ? named : hands.length === 1 ? hands[0]!.name : 'main';
  if (hands.find((h) => h.name === target)?.kind !== 'self_hosted') return false;
  return opts.answeredToo || !host.log.hasIdempotencyKey(sessionId, workerResultKey(e.id));
}

const TOOL_USE_FRAME = 'event: agent.tool_use\n';

/**
 * The SSE body a worker gets: the same frames (`event:`, `data:` on one line, `id:`, blank line),
 * less the `agent.tool_use` frames it may not see. Frames are cut at their blank line; only
 * tool-call frames are parsed. Backpressure passes through (pipeThrough).
 */
export function filterWorkerStream(body: ReadableStream<Uint8Array>, keep: (e: Call) => boolean): ReadableStream<Uint8Array> {
  let held = '';
  const frames = new TransformStream<string, string>({
    transform(chunk, out) {
      held += chunk;
      let end: number;
      while ((end = held.indexOf('\n\n')) >= 0) {
        const frame = held.slice(0, end + 2);
        held = held.slice(end + 2);
        if (frame.startsWith(TOOL_USE_FRAME)) {
          const data = /\ndata: (.*)\n/.exec(frame)?.[1];
          try {
            if (data && !keep(JSON.parse(data) as Call)) continue;
          } catch {
            // not an event we can read: passed on as it is
          }
        }
        out.enqueue(frame);
      }
    },
    flush(out) {
      if (held) out.enqueue(held);
    },
  });
  return body.pipeThrough(new TextDecoderStream()).pipeThrough(frames).pipeThrough(new TextEncoderStream());
}
