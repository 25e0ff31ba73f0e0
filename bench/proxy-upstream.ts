/**
 * `npm run bench:proxy-upstream`: how long a new session's first model request takes to go
 * through the model proxy to an HTTPS model API (a local TLS server with its own CA), when the
 * proxy's connection upstream is:
 * - **dialled** at the request, as before upstream-pool.ts (a proxy the API never answered);
 * - **opened ahead** as the session's capability is minted (other sessions' brains hold theirs);
 * - **reused**, left whole by a brain that went away.
 * Measured from the brain's write of its request to the API server's reading of it, with modes
 * interleaved round by round. On loopback a handshake costs only CPU; against the real API each
 * one it avoids also saves two network round trips (TCP, then TLS 1.3).
 */
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ModelProxy } from '../main/vault/model-proxy';
import { makeCa, makeLeafKey, mintServerCert } from '../main/vault/x509';
import { fmt, percentile } from './stats';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
/** A bound brain's request follows its capability by about this much (bench:first-turn-trace). */
const BIND_TO_REQUEST_MS = 4;
const keys = { modelKey: async () => ({ value: 'sk-bench', header: 'x-api-key' as const, source: 'env' as const }) };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ca = await makeCa('bench upstream CA');
const leaf = await makeLeafKey();
const cert = await mintServerCert(ca, leaf.spki, '127.0.0.1');
let arrived: (at: number) => void = () => {};
const api = https.createServer({ key: leaf.keyPem, cert }, (req, res) => {
  arrived(performance.now());
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}'));
});
await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
const upstream = `https://127.0.0.1:${(api.address() as AddressInfo).port}`;

/** One brain: connects, sends its request, resolves with (request written → API has it) once answered, and stays connected. */
async function brain(proxy: ModelProxy, token: string): Promise<{ ms: number; socket: net.Socket }> {
  const socket = net.connect(Number(new URL(proxy.url!).port), '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const got = new Promise<number>((resolve) => (arrived = resolve));
  const answered = new Promise((r) => socket.once('data', r));
  const sent = performance.now();
  socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${token}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`);
  const at = await got;
  await answered;
  return { ms: at - sent, socket };
}

const results: Record<'dialled' | 'opened ahead' | 'reused', number[]> = { dialled: [], 'opened ahead': [], reused: [] };
const ahead = new ModelProxy({ keys, upstream: () => upstream, upstreamCa: [ca.certPem] });
const reusing = new ModelProxy({ keys, upstream: () => upstream, upstreamCa: [ca.certPem] });
await Promise.all([ahead.listening, reusing.listening]);
// Each has been answered once (as a host that has served a session).
const held: net.Socket[] = [(await brain(ahead, ahead.mint('sesn_first').token)).socket];
(await brain(reusing, reusing.mint('sesn_first').token)).socket.destroy();
for (let i = 0; i < ROUNDS; i++) {
  const fresh = new ModelProxy({ keys, upstream: () => upstream, upstreamCa: [ca.certPem] });
  await fresh.listening;
  const cap = fresh.mint(`sesn_${i}`);
  await sleep(BIND_TO_REQUEST_MS);
  const d = await brain(fresh, cap.token);
  results.dialled.push(d.ms);
  d.socket.destroy();
  await fresh.close();

  const a = ahead.mint(`sesn_${i}`);
  await sleep(BIND_TO_REQUEST_MS);
  const b = await brain(ahead, a.token);
  results['opened ahead'].push(b.ms);
  held.push(b.socket); // still bound: the next session needs a connection of its own

  const r = reusing.mint(`sesn_${i}`);
  await sleep(BIND_TO_REQUEST_MS);
  const c = await brain(reusing, r.token);
  results.reused.push(c.ms);
  c.socket.destroy(); // its brain went away between answers
  await sleep(20);
}
for (const s of held) s.destroy();
await Promise.all([ahead.close(), reusing.close()]);
api.closeAllConnections();
api.close();

console.log(`a new session's first request, written by its brain → read by an HTTPS model API on loopback, ${ROUNDS} rounds, modes interleaved`);
const summary: Record<string, { p50: number; p95: number }> = {};
for (const [mode, list] of Object.entries(results)) {
  summary[mode] = { p50: percentile(list, 50), p95: percentile(list, 95) };
  console.log(`  ${mode.padEnd(14)} p50 ${fmt(summary[mode]!.p50, 2).padStart(6)}  p95 ${fmt(summary[mode]!.p95, 2).padStart(6)} ms`);
}
console.log(JSON.stringify(summary));
