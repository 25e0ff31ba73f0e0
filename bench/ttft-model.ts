// bench:ttft's model server, in its own process. Each request's first token comes after a delay
// spread evenly over BENCH_FIRST_TOKEN_MS ("min-max") by the session's number ("ttft N" in its
// first message; the golden-ratio sequence), so that session N waits as long in every mode: the
// modes then differ by what the host does, not by the luck of a draw. A session whose first
// message says "tool" gets a bash call first (touching its hand); every other request gets a
// short text.
import { startModelServer, type RecordedRequest } from '../test/fixtures/model-server';

const [min, max] = (process.env.BENCH_FIRST_TOKEN_MS ?? '600-1400').split('-').map(Number) as [number, number];
/** Session n's delay for its first request (`later`: a request after a tool's result). */
const delay = (n: number | undefined, later: boolean) => {
  const u = n === undefined ? Math.random() : ((n + 1) * 0.6180339887498949 + (later ? 0.5 : 0)) % 1;
  return min + u * ((max ?? min) - min);
};
const server = await startModelServer((req: RecordedRequest) => {
  const messages = req.body.messages as { content: string | { type: string; text?: string }[] }[];
  const first = JSON.stringify(messages[0]?.content ?? '');
  const n = /ttft (\d+)/.exec(first)?.[1];
  const session = n === undefined ? undefined : Number(n);
  const answered = messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).some((b) => b.type === 'tool_result');
  if (first.includes('[tool]') && !answered) return { firstTokenDelayMs: delay(session, false), blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'ls' } }] };
  return { firstTokenDelayMs: delay(session, answered), blocks: [{ type: 'text', text: 'done' }] };
});
process.send!({ url: server.url });
process.on('message', (m: { t: string }) => {
  if (m.t === 'stop') void server.close().then(() => process.exit(0));
});
