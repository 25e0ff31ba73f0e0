import type { RecordedRequest, Reply } from '../test/fixtures/model-server';

/**
 * The scripted model behind the e2e server: asked to create hello.txt, it writes the file and
 * shows it with bash; asked to write slowly, it streams a long reply with pauses (so the page's
 * live text can be watched growing); otherwise it echoes the last user text.
 */
/** About forty words, streamed in pieces with pauses by the "write (very) slowly" branches. */
export const SLOW_REPLY =
  'Here is a slow reply, written a few words at a time so that you can watch it grow: ' +
  'the page shows the text as it arrives, in a row marked as in progress, and swaps that row ' +
  'for the logged message the moment the log has it.';

export function e2eModel(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: { type: string; text?: string; content?: { text?: string }[] }[] }[];
  const firstUser = messages[0]!.content.map((b) => b.text ?? '').join('');
  const last = messages[messages.length - 1]!;
  const results = messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
  if (/create hello\.txt/.test(firstUser)) {
    if (results.length === 0) return { blocks: [{ type: 'text', text: 'Writing hello.txt.' }, { type: 'tool_use', name: 'write', input: { file_path: 'hello.txt', content: 'hello from corral\n' } }], chunkDelayMs: 20 };
    if (results.length === 1) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'cat hello.txt' } }] };
    const shown = results[1]!.content?.map((c) => c.text ?? '').join('') ?? '';
    return { blocks: [{ type: 'text', text: `Here it is:\n${shown}` }] };
  }
  if (/ask before running/.test(firstUser)) {
    // Under an always_ask agent: one command, then what its result said (a denial's reason too).
    if (results.length === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo allowed-by-the-user' } }] };
    return { blocks: [{ type: 'text', text: `The call said: ${results[0]!.content?.map((c) => c.text ?? '').join('') ?? ''}` }] };
  }
  const scripted = scriptedTurn(messages);
  if (scripted) return scripted;
  const text = last.content.map((b) => b.text ?? '').join('');
  if (/write very slowly/.test(text)) return { blocks: [{ type: 'text', text: SLOW_REPLY }], chunkDelayMs: 800 };
  if (/write slowly/.test(text)) return { blocks: [{ type: 'text', text: SLOW_REPLY }], chunkDelayMs: 60 };
  return { blocks: [{ type: 'text', text: `echo: ${text}` }], chunkDelayMs: 10 };
}

/** Two thousand coloured lines (about 90,000 characters): more than the model's cap, so the host keeps the whole. */
export const COLOUR_COMMAND = "for i in $(seq 1 2000); do printf '\\033[32mok\\033[0m line %04d of the colourful output \\033[1;31mred\\033[0m\\n' $i; done";

type Msg = { role: string; content: { type: string; text?: string; content?: { text?: string }[] }[] };

/**
 * The window's scenarios, keyed on the last typed user message: a long command to interrupt,
 * a colourful output longer than the model's cap, a command on whatever hand the session has.
 * After a tool result the model says it is done, quoting the output's first line.
 */
function scriptedTurn(messages: Msg[]): Reply | undefined {
  const last = messages[messages.length - 1]!;
  const typed = [...messages].reverse().find((m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && !String(b.text).startsWith('<system')));
  // The newest typed text (a fork's message follows the parent's in the same user turn).
  const text = typed?.content.filter((b) => b.type === 'text').pop()?.text ?? '';
  // A follow-up when the newest block is a tool result (a typed message after an interrupted call comes after it).
  const tail = last.content[last.content.length - 1];
  const result = tail?.type === 'tool_result' ? tail : undefined;
  const mine = /run a long command|colourful output|on this hand|take a screenshot|run (whoami|sleep) on hand \w+/.test(text);
  if (!mine) return undefined;
  if (result) {
    const out = (result.content ?? []).map((c) => c.text ?? '').join('').split('\n')[0] ?? '';
    return { blocks: [{ type: 'text', text: `Done. The output began: ${out.slice(0, 80)}` }], chunkDelayMs: 10 };
  }
  if (/run a long command/.test(text)) return { blocks: [{ type: 'text', text: 'Starting a long command.' }, { type: 'tool_use', name: 'bash', input: { command: 'sleep 30; echo finished' } }] };
  const onHand = /run whoami on hand (\w+)/.exec(text);
  const sleepOn = /run sleep on hand (\w+)/.exec(text);
  if (sleepOn) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'sleep 4; echo slept', hand: sleepOn[1] } }] };
  if (onHand) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'whoami', hand: onHand[1] } }] };
  if (/take a screenshot/.test(text)) return { blocks: [{ type: 'tool_use', name: 'screenshot', input: {} }] };
  if (/colourful output/.test(text)) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: COLOUR_COMMAND } }] };
  return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo "hello from $(hostname)"; uname -s' } }], usage: { cache_read_input_tokens: 120 } };
}
