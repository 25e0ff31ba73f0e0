// bench:ttft's model server, in its own process. Each request's first token comes after a delay
// drawn from BENCH_FIRST_TOKEN_MS ("min-max", uniform). A session whose first message says
// "tool" gets a bash call first (touching its hand); every other request gets a short text.
import { startModelServer, type RecordedRequest } from '../test/fixtures/model-server';

const [min, max] = (process.env.BENCH_FIRST_TOKEN_MS ?? '600-1400').split('-').map(Number) as [number, number];
const delay = () => min + Math.random() * ((max ?? min) - min);
const server = await startModelServer((req: RecordedRequest) => {
  const messages = req.body.messages as { content: string | { type: string; text?: string }[] }[];
  const first = JSON.stringify(messages[0]?.content ?? '');
  const answered = messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).some((b) => b.type === 'tool_result');
  if (first.includes('[tool]') && !answered) return { firstTokenDelayMs: delay(), blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'ls' } }] };
  return { firstTokenDelayMs: delay(), blocks: [{ type: 'text', text: 'done' }] };
});
process.send!({ url: server.url });
process.on('message', (m: { t: string }) => {
  if (m.t === 'stop') void server.close().then(() => process.exit(0));
});
