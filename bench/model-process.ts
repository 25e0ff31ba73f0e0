// The bench's model server, in its own process so its work does not load the host's event loop.
// Replies: a `read` tool call until TURNS results are in, then a text. Sends {url} when ready
// and, when asked, the arrival / finish times of every request (epoch ms, sub-ms precision).
// BENCH_MODEL=lean (the default) serves them with lean-model-server.ts; BENCH_MODEL=fixture with
// the tests' model server, which checks every request and streams each frame on its own (more
// CPU taken from the host and brain on a 2-core machine).
import { startModelServer, type RecordedRequest } from '../test/fixtures/model-server';
import { startLeanModelServer } from './lean-model-server';

const TURNS = Number(process.env.BENCH_TURNS ?? 12);
const epoch = (hr: number | undefined) => (hr === undefined ? undefined : performance.timeOrigin + hr);

async function start(): Promise<{ url: string; timings(): { session: string; arrived?: number; finished?: number }[]; close(): Promise<void> }> {
  if (process.env.BENCH_MODEL === 'fixture') {
    const server = await startModelServer((req: RecordedRequest) => {
      const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
      if (results < TURNS) return { blocks: [{ type: 'tool_use', name: 'read', input: { file_path: 'note.txt' } }] };
      return { blocks: [{ type: 'text', text: 'done' }] };
    });
    return {
      url: server.url,
      timings: () =>
        server.requests.map((r) => ({
          session: /bench (sesn_[0-9A-Z]+)/.exec(JSON.stringify(r.body?.messages?.[0]?.content))?.[1] ?? '?',
          arrived: epoch(r.arrivedHr),
          finished: epoch(r.finishedHr),
        })),
      close: () => server.close(),
    };
  }
  const server = await startLeanModelServer(TURNS);
  return {
    url: server.url,
    timings: () => server.timings.map((t) => ({ session: t.session, arrived: epoch(t.arrivedHr), finished: epoch(t.finishedHr) })),
    close: () => server.close(),
  };
}

const server = await start();
process.send!({ url: server.url });
process.on('message', (m: { t: string }) => {
  if (m.t === 'timings') process.send!({ timings: server.timings() });
  if (m.t === 'stop') void server.close().then(() => process.exit(0));
});
