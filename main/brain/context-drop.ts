/**
 * Dropping the oldest turns of a session that no longer fits its model's context window even with
 * every older tool result elided (agent messages and tool calls add up too: at 100k events they
 * are megabytes, and the API refuses a request over the window). The request then starts at an
 * assistant message further on, after a note saying which events are left out and how to read
 * them (in ASCII: one other character would make V8 hold the whole request body as two-byte
 * text). What is dropped is decided from the transcript alone (the same events give the same
 * request: the UI rebuilds it with `buildRequest`), and it moves in steps of a quarter of the
 * budget, so the request's start — the prefix the model has cached — stays put between steps.
 */
import { CHARS_PER_TOKEN, tokensOfChars, type Message } from './transcript';

/** Characters kept for the note that replaces the dropped messages (it is shorter than this). */
const NOTE_RESERVE_CHARS = 512;

/** The step the request's start moves by, in tokens: a quarter of the budget. */
const stepOf = (budget: number) => Math.max(1, Math.floor(budget / 4));

/**
 * How many characters (JSON, with a comma per message) to drop from the front of the transcript,
 * or 0 when it fits. `prefixChars` is the size of every message but the newest as if each of its
 * tool results were elided; one step of room is kept for the newest message and what follows.
 */
export function charsToDrop(prefixChars: number, fixedTokens: number, budget: number): number {
  const step = stepOf(budget);
  const over = tokensOfChars(prefixChars) + fixedTokens + step - budget;
  if (over <= 0) return 0;
  return Math.ceil(over / step) * step * CHARS_PER_TOKEN + NOTE_RESERVE_CHARS;
}

/**
 * The first message of the request once messages are dropped: `droppedThrough` is the position
 * of the last event left out, `firstUserSeq` that of the session's first user message.
 */
export function dropNote(droppedThrough: number, firstUserSeq: number): Message {
  return {
    role: 'user',
    content: [
      {
        type: 'text',
        text: `[This session is longer than the context window: its events 1 to ${droppedThrough} are not in this request (the oldest turns go first, in steps). The user's first message is event ${firstUserSeq}. Read any of them with read_session_events, e.g. {"from": ${firstUserSeq}, "to": ${firstUserSeq}}.]`,
      },
    ],
  };
}
