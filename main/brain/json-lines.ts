/**
 * Newline-delimited JSON, the brain wire's framing when a brain is started by the launcher
 * (brain-launcher.ts): the same framing Node's own IPC uses with `serialization: 'json'`
 * (JSON.stringify never writes a raw newline).
 */

/** One message as a line. */
export const toLine = (message: unknown): string => `${JSON.stringify(message)}\n`;

/**
 * Splits text chunks (utf8-decoded) into parsed messages. Scans each chunk once: a message of
 * many megabytes arriving in 64 kB chunks is joined once, not re-scanned per chunk.
 * A line that is not JSON is passed to `onBad` (the peer is broken; the caller decides).
 */
export function lineSplitter(onMessage: (message: unknown) => void, onBad: (err: Error) => void): (chunk: string) => void {
  let pending: string[] = [];
  return (chunk) => {
    let from = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', from)) {
      pending.push(chunk.slice(from, nl));
      from = nl + 1;
      const line = pending.length === 1 ? pending[0]! : pending.join('');
      pending = [];
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (err) {
        onBad(err as Error);
        continue;
      }
      onMessage(message);
    }
    if (from < chunk.length) pending.push(chunk.slice(from));
  };
}
