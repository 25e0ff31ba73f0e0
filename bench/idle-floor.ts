/**
 * What idle costs this machine, printed beside bench:brain's series whose tools take time. Each
 * of those round trips starts after the host, the brain and the model server slept as long as
 * the tool ran, and work woken after a second asleep runs slower than the same work kept busy
 * (the core's caches and state are cold). Side by side in one run, alternating, each sample after
 * a pause drawn as the bench draws a tool's time:
 * - a cross-process wake-up round trip (wake-floor.ts) after that pause and after 2 ms;
 * - the host's check of the batch a brain sends as a reply's one call leaves (ipc-schema.ts: the
 *   call's append, the reply's end, the execute), after that pause, after 2 ms, and in a loop (a
 *   call among thousands runs with everything it touches in the core's caches; a round trip
 *   runs each step once).
 * The overhead target is a sum of such steps: these say how much of it is the machine's.
 */
import { parseBatchedMessage, parseBrainMessage } from '../main/brain/ipc-schema';
import { newId } from '../main/db/ids';
import { fmt, percentile } from './stats';
import { echoChild } from './wake-floor';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A batch as a brain sends it when the model's reply asks for one tool call (harness.ts). */
function replyBatch(): { t: 'batch'; messages: unknown[] } {
  const useId = newId.event();
  const input = { file_path: '/work/repo/src/file-12.ts' };
  return {
    t: 'batch',
    messages: [
      { t: 'req', id: 11, op: 'emit', args: { key: `use:${useId}`, events: [{ type: 'agent.tool_use', id: useId, name: 'read', input, model_tool_use_id: 'toolu_01A09q90qw90lq917835lq9', evaluated_permission: 'allow', evaluation: { type: 'always_allow' } }] } },
      {
        t: 'req',
        id: 12,
        op: 'emit',
        args: { key: 'mend:1', events: [{ type: 'span.model_request_end', model_request_start_id: newId.event(), is_error: false, model_usage: { input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }, stop_reason: 'tool_use', first_token_ms: 2 }] },
      },
      { t: 'req', id: 13, op: 'execute', args: { name: 'read', input, toolUseId: useId } },
    ],
  };
}

/** The host's check of one such batch (ms), as supervisor.ts runs it: the envelope, then each message. */
function checkBatch(batch: { messages: unknown[] }): number {
  const t = performance.now();
  const whole = parseBrainMessage(batch);
  const parts = batch.messages.map(parseBatchedMessage);
  const ms = performance.now() - t;
  if (!whole.ok || parts.some((p) => !p.ok)) throw new Error('the bench batch does not pass the host check');
  return ms;
}

/** Prints the figures for pauses drawn by `gapMs` (`samples` of each kind). */
export async function printIdleFloor(gapMs: () => number, samples = 30): Promise<void> {
  const batch = replyBatch();
  for (let i = 0; i < 2000; i++) checkBatch(batch);
  const hot: number[] = [];
  for (let i = 0; i < 2000; i++) hot.push(checkBatch(batch));
  const echo = echoChild();
  const wakeIdle: number[] = [];
  const wakeBusy: number[] = [];
  const checkIdle: number[] = [];
  const checkBusy: number[] = [];
  try {
    for (let i = 0; i < 20; i++) await echo.roundTrip(); // the child's first replies run cold code
    for (let i = 0; i < samples; i++) {
      await pause(gapMs());
      wakeIdle.push(await echo.roundTrip());
      await pause(2);
      wakeBusy.push(await echo.roundTrip());
      await pause(gapMs());
      checkIdle.push(checkBatch(batch));
      await pause(2);
      checkBusy.push(checkBatch(batch));
    }
  } finally {
    echo.close();
  }
  const pair = (a: number[]) => `p50 ${fmt(percentile(a, 50), 3)} / p99 ${fmt(percentile(a, 99), 3)} ms`;
  console.log(`   after the same pause as a tool (n=${samples} each): a cross-process wake-up round trip ${pair(wakeIdle)} (2 ms after the last: ${pair(wakeBusy)});`);
  console.log(`   the host's check of a brain's one-call batch ${pair(checkIdle)} (2 ms after the last: ${pair(checkBusy)}; in a loop: ${pair(hot)})`);
}
