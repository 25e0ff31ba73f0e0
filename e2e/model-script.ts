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
  const text = last.content.map((b) => b.text ?? '').join('');
  if (/write very slowly/.test(text)) return { blocks: [{ type: 'text', text: SLOW_REPLY }], chunkDelayMs: 800 };
  if (/write slowly/.test(text)) return { blocks: [{ type: 'text', text: SLOW_REPLY }], chunkDelayMs: 60 };
  return { blocks: [{ type: 'text', text: `echo: ${text}` }], chunkDelayMs: 10 };
}
