import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import { tmpDir } from '../helpers/tmp';

const msg = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

function freshLog() {
  const file = path.join(tmpDir(), 'corral.sqlite');
  return { file, log: new SessionLog(openDatabase({ file })) };
}

describe('appends committed together (emitEventGroups)', () => {
  it('makes each group as emitEvents would, in order, in one commit', () => {
    const { file, log } = freshLog();
    const { session } = log.createSession();
    const seen: number[] = [];
    log.subscribe(session.id, (e) => seen.push(e.seq));
    const walBefore = fs.statSync(`${file}-wal`).size;
    const [a, b] = log.emitEventGroups(session.id, [
      { events: [msg('one'), msg('two')], key: 'k1' },
      { events: [msg('three')], key: 'k2' },
    ]);
    expect(a).not.toBeInstanceOf(Error);
    expect((a as { seq: number }[]).map((e) => e.seq)).toEqual([1, 2]);
    expect((b as { seq: number }[]).map((e) => e.seq)).toEqual([3]);
    expect(seen).toEqual([1, 2, 3]);
    // One commit: the WAL grew by fewer pages than the same appends made one by one.
    const together = fs.statSync(`${file}-wal`).size - walBefore;
    const apart0 = fs.statSync(`${file}-wal`).size;
    log.emitEvents(session.id, [msg('four'), msg('five')], 'k3');
    log.emitEvents(session.id, [msg('six')], 'k4');
    expect(together).toBeLessThan(fs.statSync(`${file}-wal`).size - apart0);
    // A repeated key answers with what it made the first time and appends nothing.
    const [again] = log.emitEventGroups(session.id, [{ events: [msg('one'), msg('two')], key: 'k1' }, { events: [msg('seven')], key: 'k5' }]);
    expect((again as { seq: number }[]).map((e) => e.seq)).toEqual([1, 2]);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('fails a group on its own: the others are kept', () => {
    const { log } = freshLog();
    const { session } = log.createSession();
    const out = log.emitEventGroups(session.id, [
      { events: [msg('kept')], key: 'a' },
      { events: [msg('dropped'), { type: '' }], key: 'b' },
      { events: [], key: 'c' },
      { events: [msg('kept too')], key: 'd' },
    ]);
    expect(out.map((r) => (r instanceof Error ? 'error' : 'ok'))).toEqual(['ok', 'error', 'error', 'ok']);
    expect(log.getEvents(session.id).map((e) => (e.content as { text: string }[])[0]!.text)).toEqual(['kept', 'kept too']);
    expect(log.getEvents(session.id).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('fails every group for a session that is not there', () => {
    const { log } = freshLog();
    const out = log.emitEventGroups('sesn_missing', [{ events: [msg('x')], key: 'a' }]);
    expect(out[0]).toBeInstanceOf(Error);
  });

  it('fails a one-event group whose insert is refused, leaving no trace of it: the log stays gapless', () => {
    const { log } = freshLog();
    const { session } = log.createSession();
    const [first] = log.emitEvents(session.id, [msg('first')], 'k0');
    const out = log.emitEventGroups(session.id, [
      { events: [msg('kept')], key: 'a' },
      // Refused at its insert (the id is taken): its status change must not be made either.
      { events: [{ type: 'session.status_running', id: first!.id }], key: 'b' },
      { events: [{ type: 'span.model_request_end', id: first!.id, model_request_start_id: 'x', is_error: false, model_usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } }], key: 'c' },
      { events: [msg('kept too')], key: 'd' },
    ]);
    expect(out.map((r) => (r instanceof Error ? r.message : 'ok'))).toEqual(['ok', expect.stringContaining('already in the log'), expect.stringContaining('already in the log'), 'ok']);
    expect(log.getEvents(session.id).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.getSession(session.id).status).toBe('idle');
    expect(log.getSession(session.id).usage.input_tokens).toBe(0);
    // The refused groups' keys were not used: they can be used again.
    const [again] = log.emitEventGroups(session.id, [{ events: [{ type: 'session.status_running' }], key: 'b' }]);
    expect((again as { seq: number }[]).map((e) => e.seq)).toEqual([4]);
    expect(log.getSession(session.id).status).toBe('running');
  });
});
