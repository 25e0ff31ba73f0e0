/**
 * Entry of the worker thread that holds Anthropic's sandbox runtime for the whole host process
 * (one configuration per process, as the runtime wants). The runtime works synchronously on the
 * calling thread: each wrap runs `which bwrap` and `which bash` as sync spawns, starts ripgrep
 * and resolves paths with realpathSync; its dependency check and first start spawn more. On the
 * host's event loop that was 15–30 ms of stall (up to 50) per sandboxed shell start and ~100 ms
 * at the runtime's start, for every session, the API and the UI (`npm run bench:sandbox-start`). Here it stalls only this thread; its proxy
 * servers (the sandbox's only way out) run here too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { SandboxInitReply, SandboxReply, SandboxRequest, WrapReply } from './sandbox-thread-protocol';

type SandboxLib = typeof import('@anthropic-ai/sandbox-runtime');

const port = parentPort;
if (!port) throw new Error('sandbox-runtime-worker.ts runs as a worker thread');
/** Set to 1 once the runtime's exit clean-up ran (the host waits on it in its own 'exit'). */
const exited = (workerData as { exited: Int32Array }).exited;

let lib: Promise<SandboxLib> | undefined;
const load = () => (lib ??= import('@anthropic-ai/sandbox-runtime'));
let initialized: Promise<SandboxInitReply> | undefined;
const waits = new Map<number, AbortController>();

async function init(config: Parameters<SandboxLib['SandboxManager']['initialize']>[0]): Promise<SandboxInitReply> {
  let sandbox: SandboxLib['SandboxManager'];
  try {
    sandbox = (await load()).SandboxManager;
  } catch (err) {
    return { ok: false, reason: `the sandbox runtime could not be loaded: ${(err as Error).message}` };
  }
  if (!sandbox.isSupportedPlatform()) return { ok: false, reason: 'this system cannot run the sandbox (WSL 1?)' };
  const deps = sandbox.checkDependencies();
  if (deps.errors.length > 0) {
    const hint = process.platform === 'linux' ? ' (on Debian/Ubuntu: apt-get install bubblewrap socat ripgrep)' : '';
    return { ok: false, reason: `the sandbox's tools are missing: ${deps.errors.join('; ')}${hint}` };
  }
  // Named once: without a path the runtime looks bubblewrap up (a sync `which`) at every wrap.
  const bwrapPath = process.platform === 'linux' && !config.bwrapPath ? onPath('bwrap') : undefined;
  try {
    await sandbox.initialize(bwrapPath ? { ...config, bwrapPath } : config);
  } catch (err) {
    return { ok: false, reason: `the sandbox could not start: ${(err as Error).message}` };
  }
  return { ok: true };
}

/** The first executable file named `name` in PATH's folders, or undefined. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

async function wrap(m: Extract<SandboxRequest, { op: 'wrap' }>): Promise<WrapReply> {
  const { SandboxManager: sandbox } = await load();
  await initialized;
  const ctrl = new AbortController();
  waits.set(m.id, ctrl);
  try {
    const { argv } = await sandbox.wrapWithSandboxArgv(m.inner, 'bash', m.custom, ctrl.signal, m.cwd, { commandId: m.commandId, commandText: m.commandText });
    // Its caller stopped waiting: nobody will run it, or release it.
    if (ctrl.signal.aborted) {
      sandbox.cleanupAfterCommand();
      throw new Error('aborted');
    }
    if (m.allowed.length === 0) return { argv, registered: false };
    try {
      sandbox.registerCommandNetworkLists(m.commandId, { allowedDomains: m.allowed });
    } catch (err) {
      sandbox.cleanupAfterCommand();
      throw err;
    }
    return { argv, registered: true };
  } finally {
    waits.delete(m.id);
  }
}

async function release(commandId: string, registered: boolean): Promise<void> {
  const { SandboxManager: sandbox } = await load();
  if (registered) sandbox.unregisterCommandNetworkLists(commandId);
  sandbox.cleanupAfterCommand();
}

const reply = (id: number, run: () => Promise<unknown>) =>
  run().then(
    (value) => port.postMessage({ id, ok: true, value } satisfies SandboxReply),
    (err: unknown) => port.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies SandboxReply),
  );

port.on('message', (m: SandboxRequest) => {
  switch (m.op) {
    case 'init':
      initialized ??= init(m.config);
      void reply(m.id, () => initialized!);
      return;
    case 'wrap':
      void reply(m.id, () => wrap(m));
      return;
    case 'abort':
      waits.get(m.id)?.abort();
      return;
    case 'release':
      void release(m.commandId, m.registered).catch(() => {});
      return;
    case 'exit':
      // The runtime's own 'exit' handlers (registered when it started) run first, then this one.
      process.once('exit', () => {
        Atomics.store(exited, 0, 1);
        Atomics.notify(exited, 0);
      });
      process.exit(0);
  }
});
