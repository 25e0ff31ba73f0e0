/**
 * `npm run bench:flood`: does a flood of tool output stall the host? Commands that print as fast
 * as they can (`yes`, random base64, 300 MB of one letter) run through the local hand's bash while
 * the host's event loop is sampled (1 ms timer gaps and its delay histogram). Side by side, in
 * the same run, the same command read the way the output collector held it until it kept bytes:
 * decoded strings, up to 64 MiB (the first half, then a sliding window), which every
 * young-generation collection copies. Prints p50/p99/max of the loop's delay for each.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { createLocalHand } from '../main/hands/local';
import { fmt } from './stats';

const COMMANDS = ['timeout 4 yes', 'timeout 4 cat /dev/urandom | base64 -w0', 'head -c 300000000 /dev/zero | tr "\\0" x'];
const RUNS = Number(process.env.BENCH_FLOOD_RUNS ?? 2);
const HALF = 32 * 1024 * 1024;

/** The loop's delay while `work` runs: p50/p99/max in ms. */
async function probe(work: () => Promise<unknown>): Promise<{ p50: number; p99: number; max: number }> {
  // What the last run left is collected first, not during this one (--expose-gc).
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await work();
  h.disable();
  return { p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
}

/** The command's output held as decoded strings: the first 32 MiB, then the last 32 MiB. */
function asStrings(command: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'ignore'] });
    const decoder = new StringDecoder('utf8');
    const head: string[] = [];
    let headBytes = 0;
    const tail: string[] = [];
    let tailBytes = 0;
    child.stdout.on('data', (c: Buffer) => {
      const text = decoder.write(c);
      if (headBytes + c.length <= HALF) return void (head.push(text), (headBytes += c.length));
      tail.push(text);
      tailBytes += c.length;
      while (tailBytes > HALF) tailBytes -= Buffer.byteLength(tail.shift()!);
    });
    child.on('close', () => resolve(head.length + tail.length));
  });
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-flood-'));
const hand = createLocalHand({ workDir: dir });
await hand.execute('bash', { command: 'true' });
const row = (label: string, r: { p50: number; p99: number; max: number }) => `  ${label.padEnd(24)} loop delay p50 ${fmt(r.p50, 1)} / p99 ${fmt(r.p99, 1)} / max ${fmt(r.max, 1)} ms`;
console.log(`corral bench:flood — ${os.cpus().length} cores, node ${process.version}, ${RUNS} runs of each, alternating`);
for (const command of COMMANDS) {
  console.log(command);
  for (let i = 0; i < RUNS; i++) {
    console.log(row('through the hand (bytes)', await probe(() => hand.execute('bash', { command }))));
    console.log(row('held as strings', await probe(() => asStrings(command))));
  }
}
await hand.dispose();
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
