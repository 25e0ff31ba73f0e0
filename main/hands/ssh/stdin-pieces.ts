import type { Writable } from 'node:stream';

/** How much of a command's stdin is handed to an SSH channel at once. */
export const STDIN_PIECE_BYTES = 256 * 1024;

/**
 * Writes `data` to a channel a piece at a time, each once the last is sent and the loop has had a
 * turn, then ends it. ssh2
 * encrypts all it may send of one write at once when the peer opens its window: a repository's
 * pack written whole held the host's loop about 30 ms per 2 MB window (bench:ttft's profile).
 * Stops quietly if the channel closes first (the command exited without reading it all).
 */
export function writeInPieces(channel: Writable, data: Buffer, pieceBytes = STDIN_PIECE_BYTES): void {
  let at = 0;
  const next = (err?: Error | null) => {
    if (err || channel.destroyed || channel.writableEnded) return;
    if (at >= data.length) return void channel.end();
    const piece = data.subarray(at, at + pieceBytes);
    at += piece.length;
    // The next piece in a macrotask of its own: a write's callback comes in a nextTick, so a chain
    // of them would still run before anything else.
    channel.write(piece, (e) => setImmediate(next, e));
  };
  next();
}
