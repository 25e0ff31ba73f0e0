/**
 * The single call every hand answers, whatever it is (local folder, SSH host, container,
 * device): `execute(name, input)` → a result for the model. The brain never knows which
 * kind of hand it holds.
 */

/** What one tool call produced. `content` goes to the model (already capped). */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /**
   * The full output when `content` had to be cut for the model, for the UI: one string, or its
   * pieces in order, each a string or whole text as UTF-8 (a bash output of up to 64 MiB is
   * never joined on the host's loop, nor held as strings; see output-cap.ts). `fullOutputText`
   * (full-output.ts) joins it where a whole string is needed.
   */
  fullOutput?: string | readonly (string | Buffer)[];
  /** Extra facts for the log (exit code, duration, bytes, truncation). */
  details?: Record<string, unknown>;
  /** Images for the model (e.g. a device screenshot), base64-encoded. */
  images?: { media_type: 'image/png' | 'image/jpeg'; data: string }[];
}

/** Per-call options. */
export interface ExecuteOptions {
  /** Aborting kills whatever the call started (the process group) and ends it promptly. */
  signal?: AbortSignal;
  /** Upper bound for the call; on expiry it is killed like an abort. */
  timeoutMs?: number;
}

/** A hand: somewhere tools run. */
export interface Hand {
  /** Names of the tools this hand answers. */
  readonly tools: readonly string[];
  execute(name: string, input: Record<string, unknown>, opts?: ExecuteOptions): Promise<ToolOutcome>;
  /** Releases what the hand holds (connections, processes). */
  dispose(): Promise<void>;
}
