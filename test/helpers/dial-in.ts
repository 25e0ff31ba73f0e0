import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Anthropic from '@anthropic-ai/sdk';
import { SERVE_KEY, startServe as startServeProcess, type ServeProcess } from './serve-process';

// Shared set-up of the self-hosted worker tests: `serve` in its own process, and the
// `corral-worker` bin (the official SDK's EnvironmentWorker, unmodified) in others.

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts `serve` on a free port; resolves with its child and an API-key client. */
export function startServe(dataDir: string, env: Record<string, string>, children: ChildProcess[], args: string[] = []): Promise<ServeProcess> {
  return startServeProcess({ dataDir, env, children, args });
}

/** Runs `bin/corral-worker.mjs` in a process group of its own (so kill -9 takes its commands too). */
export function startWorker(o: { url: string; environmentId: string; key: string; workdir: string; workerId: string; prefix?: string[] }, children: ChildProcess[]): ChildProcess {
  const args = [path.join(root, 'bin/corral-worker.mjs'), '--url', o.url, '--environment', o.environmentId, '--workdir', o.workdir, '--worker-id', o.workerId];
  const [cmd, ...rest] = o.prefix ? [...o.prefix, process.execPath, ...args] : [process.execPath, ...args];
  const child = spawn(cmd!, rest, {
    cwd: root,
    env: { ...process.env, CORRAL_ENVIRONMENT_KEY: o.key, ANTHROPIC_API_KEY: '', CORRAL_API_KEY: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  children.push(child);
  return child;
}

/** Kills a worker's whole process group at once, as a machine that dies would. */
export function killWorker(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Makes an environment key (Corral's `POST /v1/environments/{id}/keys`). */
export async function makeKey(url: string, environmentId: string): Promise<{ id: string; key: string }> {
  const res = await fetch(`${url}/v1/environments/${environmentId}/keys`, { method: 'POST', headers: { 'x-api-key': SERVE_KEY, 'content-type': 'application/json' }, body: '{}' });
  if (!res.ok) throw new Error(`making a key: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; key: string };
}

export type Ev = { id: string; type: string; [k: string]: any };

export async function allEvents(client: Anthropic, id: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(id, { limit: 1000 })) out.push(e as Ev);
  return out;
}

/** Polls `probe` until it returns something truthy. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with the log once the session's last event is an end_turn idle after `after` events. */
export function endedTurn(client: Anthropic, id: string, after = 0, ms = 60_000): Promise<Ev[]> {
  return until(
    `session ${id} to end its turn`,
    async () => {
      const log = await allEvents(client, id);
      const last = log.at(-1);
      return log.length > after && last?.type === 'session.status_idle' && last.stop_reason?.type === 'end_turn' ? log : undefined;
    },
    ms,
  );
}

export const textOf = (e: Ev | undefined) => (e?.content as { text: string }[] | undefined)?.map((c) => c.text).join('') ?? '';
