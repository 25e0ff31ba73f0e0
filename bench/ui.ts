/**
 * `npm run bench:ui`: a 100,000-event session with three hands (seeded straight into the log),
 * opened in headless Chromium (playwright-core with Debian's /usr/bin/chromium) against a real
 * host and server. Reports the time to the timeline's first painted rows (and to the whole log
 * loaded), and frame intervals while scrubbing the overview strip and while 50 events/s stream
 * in. Targets: first paint ≤ 1 s, p95 frame ≤ 16 ms (one 60 Hz frame, ~16.7 ms).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { startServer } from '../main/api/http/server';
import { createHost } from '../main/host';
import type { EventInput } from '../main/session/types';
import { fmt, percentile } from './stats';

const root = path.resolve(import.meta.dirname, '..');
const EVENTS = Number(process.env.BENCH_UI_EVENTS ?? 100_000);
const STREAM_SECONDS = Number(process.env.BENCH_UI_STREAM_S ?? 5);
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** One turn of a busy session: a message, a request, a tool call on one of three hands, its result. */
function turn(k: number): EventInput[] {
  const hand = ['main', 'box', 'phone'][k % 3]!;
  const out: EventInput[] = [
    { type: 'user.message', content: [{ type: 'text', text: `step ${k}: run the next check` }] },
    { type: 'session.status_running' },
    { type: 'span.model_request_start', context_seq: 0 },
    { type: 'agent.message', content: [{ type: 'text', text: `Running check ${k} on ${hand}.` }] },
    { type: 'agent.tool_use', name: 'bash', input: { command: `make check-${k}`, hand }, model_tool_use_id: `toolu_${k}` },
    { type: 'span.model_request_end', is_error: false, model_usage: { input_tokens: 1200 + k, output_tokens: 40, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50 }, first_token_ms: 300 + (k % 7) * 20 },
  ];
  if (k % 50 < 3) out.push({ type: 'hand.provisioning', hand, kind: hand === 'main' ? 'local' : hand === 'box' ? 'docker' : 'adb' }, { type: 'hand.ready', hand, kind: 'docker', duration_ms: 800, description: 'bench' });
  if (k % 97 === 5) out.push({ type: 'hand.lost', hand, reason: 'container exited (137)' });
  return out;
}

async function seed() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-ui-'));
  const host = createHost({ dataDir });
  const env = host.environments.create({ name: 'here', config: { type: 'local' } });
  const box = host.environments.create({ name: 'box', config: { type: 'docker', image: 'busybox' } });
  const phone = host.environments.create({ name: 'phone', config: { type: 'adb', serial: 'emulator-5554' } });
  const agent = host.agents.create({ name: 'bench', model: { id: 'claude-test' }, system: null, tools: [{ type: 'agent_toolset_20260401' }] });
  const { session } = host.log.createSession({ agent_id: agent.id, agent_version: 1, environment_id: env.id, record: { title: 'bench: 100k events, three hands', agent: { ...agent.record, id: agent.id } } });
  host.hands.attach(session.id, box.id, 'box');
  host.hands.attach(session.id, phone.id, 'phone');
  const t0 = performance.now();
  let batch: EventInput[] = [];
  let k = 0;
  let total = host.log.getSession(session.id).last_seq;
  while (total < EVENTS) {
    const events = turn(k);
    const use = events.find((e) => e.type === 'agent.tool_use')!;
    batch.push(...events);
    const logged = host.log.emitEvents(session.id, batch);
    const tu = logged.find((e) => e.type === 'agent.tool_use' && e.input && (e.input as { command: string }).command === (use.input as { command: string }).command)!;
    const hand = (use.input as { hand: string }).hand;
    const rest: EventInput[] = [
      { type: 'agent.tool_result', tool_use_id: tu.id, content: [{ type: 'text', text: `\u001b[32mok\u001b[0m check ${k}\n[exit code 0]` }], is_error: false, details: { exit_code: 0, duration_ms: 120, hand } },
      { type: 'session.status_idle', stop_reason: { type: 'end_turn' } },
    ];
    host.log.emitEvents(session.id, rest);
    total += batch.length + rest.length;
    batch = [];
    k++;
  }
  console.log(`seeded ${fmt(host.log.getSession(session.id).last_seq)} events (${k} turns, 3 hands) in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  return { host, sessionId: session.id, dataDir };
}

/** rAF intervals (ms) recorded in the page while `during` runs. */
async function frames(page: Page, during: () => Promise<void>): Promise<number[]> {
  // A string, not a function: tsx would wrap a function's inner closures in a helper the page lacks.
  await page.evaluate(`(() => {
    window.__frames = [];
    window.__rec = true;
    let last = 0;
    const tick = (t) => {
      if (last) window.__frames.push(t - last);
      last = t;
      if (window.__rec) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  })()`);
  await during();
  return page.evaluate(() => {
    const g = globalThis as unknown as { __frames: number[]; __rec: boolean };
    g.__rec = false;
    return g.__frames;
  });
}

const report = (what: string, f: number[]) =>
  console.log(`${what}: ${f.length} frames, p50 ${fmt(percentile(f, 50), 1)} ms, p95 ${fmt(percentile(f, 95), 1)} ms, max ${fmt(Math.max(...f), 1)} ms, over 25 ms: ${f.filter((x) => x > 25).length}`);

async function main() {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts/ensure-built.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('could not build the renderer');
  const { host, sessionId, dataDir } = await seed();
  const apiKey = 'bench-ui-key-0123456789';
  const server = await startServer(host, { port: 0, apiKey, rendererDir: path.join(root, 'out', 'renderer') });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/?token=${apiKey}`);
    // First paint of the timeline: the first event rows in the DOM, then the frame that shows them.
    await page.addInitScript(() => {
      const g = globalThis as unknown as { __painted?: number; document: { querySelector(s: string): unknown }; requestAnimationFrame(cb: () => void): number; performance: { now(): number } };
      const MO = (globalThis as unknown as { MutationObserver: new (cb: (m: unknown, obs: { disconnect(): void }) => void) => { observe(t: unknown, o: object): void } }).MutationObserver;
      new MO((_m, obs) => {
        if (g.__painted === undefined && g.document.querySelector('[data-testid="event-row"]')) {
          obs.disconnect();
          g.requestAnimationFrame(() => g.requestAnimationFrame(() => (g.__painted = g.performance.now())));
        }
      }).observe(g.document, { subtree: true, childList: true });
    });
    const cdp = process.env.BENCH_UI_PROFILE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.start');
    }
    await page.goto(`${server.url}/?session=${sessionId}`);
    await page.waitForFunction(() => (globalThis as unknown as { __painted?: number }).__painted !== undefined, null, { timeout: 60_000 });
    const painted = await page.evaluate(() => (globalThis as unknown as { __painted: number }).__painted);
    const last = host.log.getSession(sessionId).last_seq;
    await page.waitForSelector(`[data-testid="event-list"][aria-label="Events (${last})"]`, { timeout: 120_000 });
    if (cdp) {
      // BENCH_UI_PROFILE=1: where the page spent its time while the log loaded (self time by function).
      const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: { nodes: { id: number; hitCount?: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples: number[]; timeDeltas: number[] } };
      const self = new Map<string, number>();
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      profile.samples.forEach((id, k) => {
        const f = byId.get(id)!.callFrame;
        const key = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
        self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000);
      });
      for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${fmt(ms, 0)} ms  ${k}`);
    }
    const loaded = await page.evaluate(() => (globalThis as unknown as { performance: { now(): number } }).performance.now());
    const dom = await page.locator('[data-testid="event-row"]').count();
    console.log(`first paint of the timeline: ${fmt(painted, 0)} ms after navigation; all ${fmt(last)} events loaded and indexed: ${fmt(loaded, 0)} ms; ${dom} event rows in the DOM`);

    // Scrubbing: drag across the overview strip, one move per frame or so, for ~3 s.
    const box = (await page.getByTestId('overview').boundingBox())!;
    const y = box.y + box.height / 2;
    const scrub = await frames(page, async () => {
      await page.mouse.move(box.x + box.width - 2, y);
      await page.mouse.down();
      for (let k = 0; k <= 180; k++) await page.mouse.move(box.x + box.width - 2 - (k / 180) * (box.width - 4), y);
      await page.mouse.up();
    });
    const seq = await page.getByTestId('state-panel').getAttribute('data-seq');
    report(`scrubbing (${fmt(box.width, 0)} px strip, cursor ended at #${seq})`, scrub);

    // Back to live, then 50 events/s for STREAM_SECONDS while following the tail.
    await page.getByTestId('go-live').click();
    const stream = await frames(page, async () => {
      const until = Date.now() + STREAM_SECONDS * 1000;
      let k = 0;
      while (Date.now() < until) {
        host.log.emitEvent(sessionId, { type: 'agent.message', content: [{ type: 'text', text: `streamed ${k++}` }] });
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 300));
    });
    const shown = await page.getByTestId('event-list').getAttribute('aria-label');
    report(`streaming 50 events/s for ${STREAM_SECONDS} s (${shown})`, stream);
  } finally {
    await browser.close();
    await server.close();
    await host.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
