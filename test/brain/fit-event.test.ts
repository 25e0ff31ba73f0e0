import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIT_BYTES, fitToLog } from '../../main/brain/fit-event';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import type { EventInput } from '../../main/session/types';
import { tmpDir } from '../helpers/tmp';

const bytes = (e: unknown) => Buffer.byteLength(JSON.stringify(e));
const MB = 1024 * 1024;

/** Appends through a real log: nothing fitToLog gives back may be refused. */
function appendAll(events: EventInput[]) {
  const log = new SessionLog(openDatabase({ file: path.join(tmpDir(), 'c.sqlite') }));
  const { session } = log.createSession({});
  return log.emitEvents(session.id, events);
}

describe('fitToLog', () => {
  it('leaves an event that fits as it is', () => {
    const e = { type: 'agent.message', content: [{ type: 'text', text: 'hi' }] };
    expect(fitToLog(e)[0]).toBe(e);
  });

  it('splits a huge model message into parts that fit, losing nothing and keeping its id first', () => {
    const text = ('ab😀\n"é' as string).repeat(2 * MB); // 12M UTF-16 units: surrogates, escapes, multi-byte
    const id = 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const parts = fitToLog({ type: 'agent.message', id, content: [{ type: 'text', text }] });
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]!.id).toBe(id);
    expect(parts.slice(1).every((p) => p.id === undefined && p.type === 'agent.message')).toBe(true);
    expect(parts.every((p) => bytes(p) <= FIT_BYTES)).toBe(true);
    expect(parts.flatMap((p) => (p.content as { text: string }[]).map((b) => b.text)).join('')).toBe(text);
    expect(fitToLog({ type: 'agent.message', id, content: [{ type: 'text', text }] })).toEqual(parts); // the same after a crash
    expect(appendAll(parts)).toHaveLength(parts.length);
  });

  it('keeps a huge tool call without its input, saying so', () => {
    const input = { file_path: 'a', content: 'x'.repeat(5 * MB) };
    const [e] = fitToLog({ type: 'agent.tool_use', id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'write', input });
    expect(e).toMatchObject({ name: 'write', input: {}, input_dropped: { bytes: bytes(input) } });
    expect((e!.input_dropped as { reason: string }).reason).toMatch(/5\.0 MiB.*4 MiB/);
  });

  it('drops the largest images of a tool result first, then cuts its longest texts with a note', () => {
    const image = (n: number) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(n) } });
    const withImages = fitToLog({ type: 'agent.tool_result', tool_use_id: 'tu', is_error: false, content: [{ type: 'text', text: 'shot' }, image(3 * MB), image(2 * MB)] })[0]!;
    const blocks = withImages.content as { type: string; text?: string }[];
    expect(blocks.map((b) => b.type)).toEqual(['text', 'text', 'image']);
    expect(blocks[1]!.text).toMatch(/An image of 3\.0 MiB .* not kept/);
    expect(bytes(withImages)).toBeLessThanOrEqual(FIT_BYTES);

    const long = fitToLog({ type: 'agent.tool_result', tool_use_id: 'tu', content: [{ type: 'text', text: `${'h'.repeat(3 * MB)}${'t'.repeat(3 * MB)}` }] })[0]!;
    const text = (long.content as { text: string }[])[0]!.text;
    expect(long.tool_use_id).toBe('tu');
    expect(text.startsWith('hhh')).toBe(true);
    expect(text.endsWith('ttt')).toBe(true);
    expect(text).toMatch(/characters cut here: the event was 6\.0 MiB, over the log's limit of 4 MiB/);
    expect(bytes(long)).toBeLessThanOrEqual(FIT_BYTES);
    expect(appendAll([withImages, long])).toHaveLength(2);
  });

  it('cuts huge thinking and drops its signature (it is then not sent back to the model)', () => {
    const [e] = fitToLog({ type: 'agent.thinking', thinking: 'z'.repeat(5 * MB), signature: 'sig' });
    expect(e!.signature).toBeUndefined();
    expect(bytes(e)).toBeLessThanOrEqual(FIT_BYTES);
  });
});
