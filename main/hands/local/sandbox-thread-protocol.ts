/**
 * Messages between the host and the thread that holds the sandbox runtime
 * (sandbox-runtime-worker.ts, sandbox-thread.ts). Plain data only: they are structured-cloned.
 */
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';

/** What the host asks of the runtime's thread. Requests with an `id` get one reply. */
export type SandboxRequest =
  /** Loads the runtime, checks its tools and initializes it with `config` (once per thread). */
  | { op: 'init'; id: number; config: SandboxRuntimeConfig }
  /**
   * Wraps `bash -c inner` for the sandbox with the command's own rules, and registers the hosts
   * it may reach (when any) under `commandId`.
   */
  | { op: 'wrap'; id: number; inner: string; custom: Partial<SandboxRuntimeConfig>; cwd: string; commandId: string; commandText: string; allowed: string[] }
  /** Stops waiting for the wrap `id` (its caller's signal aborted). */
  | { op: 'abort'; id: number }
  /** A wrapped command ended (or never started): its hosts and its mount points go. */
  | { op: 'release'; commandId: string; registered: boolean }
  /** The host process is exiting: the runtime cleans up (its own exit handlers), then the thread sets the shared flag. */
  | { op: 'exit' };

/** Why the runtime cannot sandbox here, as `init` found it. */
export type SandboxInitReply = { ok: true } | { ok: false; reason: string };

/** One request's reply. */
export type SandboxReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** What a wrap gives back: the command line to spawn and whether its network lists were registered. */
export interface WrapReply {
  argv: string[];
  registered: boolean;
}
