import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { migrations } from '../../main/session/migrations';
import { SessionLog } from '../../main/session/store';
import { LogInputError, type LoggedEvent } from '../../main/session/types';
import { MAX_EVENT_BYTES } from '../../main/session/validate-event';
import { tmpDir } from '../helpers/tmp';

function freshLog() {
  const file = path.join(tmpDir(), 'corral.sqlite');
  const log = new SessionLog(openDatabase({ file }));
  const { session } = log.createSession({ record: {} });
  return { log, file, sessionId: session.id };
}

const text = (t: string) => ({ type: 'user.message', content: [{ type: 'text', text: t }] });
/** Bytes of an event as the log stores it (its JSON without `seq`). */
const storedBytes = (e: LoggedEvent) => {
  const { seq: _seq, ...stored } = e;
  return Buffer.byteLength(JSON.stringify(stored));
};

describe('the size of one event', () => {
  it('is capped at 4 MiB: a bigger one is refused naming its largest field, and nothing is written', () => {
    const { log, sessionId } = freshLog();
    const ok = log.emitEvent(sessionId, text('x'.repeat(MAX_EVENT_BYTES - 200)));
    expect(storedBytes(ok)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    let err: unknown;
    try {
      log.emitEvents(sessionId, [text('small'), { type: 'agent.tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'é'.repeat(MAX_EVENT_BYTES / 2) }] }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LogInputError);
    expect((err as Error).message).toMatch(/^events\[1\] is 4,194,[0-9]{3} bytes of JSON, over the log's limit of 4,194,304 bytes \(4 MiB\) per event; its largest field, events\[1\]\.content\[0\]\.text, is 4,194,304 bytes$/);
    expect(log.getSession(sessionId).last_seq).toBe(1); // the batch is all or nothing
  });
});

describe('byte-sized slices', () => {
  it('end with the event that reaches maxBytes, hold at least one event, and say whether more follow', () => {
    const { log, sessionId } = freshLog();
    const events = log.emitEvents(sessionId, Array.from({ length: 10 }, (_, i) => text(String(i).repeat(1000))));
    const size = storedBytes(events[0]!);
    expect(log.getEvents(sessionId, { maxBytes: size * 3 }).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.getEvents(sessionId, { maxBytes: size * 3 - 1 }).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.getEvents(sessionId, { maxBytes: size * 2 + 1 }).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(log.getEvents(sessionId, { maxBytes: 1 }).map((e) => e.seq)).toEqual([1]);
    expect(log.getEvents(sessionId, { after: 8, maxBytes: size * 5 }).map((e) => e.seq)).toEqual([9, 10]);
    expect(log.getEvents(sessionId, { order: 'desc', maxBytes: size * 2 }).map((e) => e.seq)).toEqual([10, 9]);
    expect(log.getEventPage(sessionId, { maxBytes: size * 4 })).toMatchObject({ more: true });
    expect(log.getEventPage(sessionId, { limit: 3 })).toMatchObject({ more: true });
    expect(log.getEventPage(sessionId, { after: 7, limit: 3 })).toMatchObject({ more: false });
    expect(log.getEventPage(sessionId, { after: 7, limit: 3 }).events).toHaveLength(3);
    expect(() => log.getEvents(sessionId, { maxBytes: 0 })).toThrow(LogInputError);
    expect(log.getEventHeads(sessionId, { after: 2, maxBytes: size * 2 })).toEqual(
      events.slice(2, 4).map((e) => ({ seq: e.seq, id: e.id, type: e.type, bytes: size })),
    );
  });
});

describe('events as JSON text', () => {
  it('are exactly JSON.stringify of the events, made without parsing them', () => {
    const { log, sessionId } = freshLog();
    log.emitEvents(sessionId, [
      text('plain'),
      text('ünïcödé 😀 \u2028 "quoted" \\ back\nslash\ttab \u0001'),
      { type: 'agent.tool_use', name: 'bash', input: { '10': 'ten', '2': 'two', b: [1.5, -0, 1e21, null, true], nested: { deep: { x: '' } } } },
      { type: 'span.model_request_end', usage: { input_tokens: 3 }, is_error: false },
    ]);
    const parsed = log.getEvents(sessionId);
    const json = log.getEventJson(sessionId);
    expect(json.map((j) => Buffer.concat(j.json).toString('utf8'))).toEqual(parsed.map((e) => JSON.stringify(e)));
    expect(json.map((j) => j.bytes)).toEqual(parsed.map((e) => Buffer.byteLength(JSON.stringify(e))));
    expect(json.map((j) => [j.seq, j.id, j.type])).toEqual(parsed.map((e) => [e.seq, e.id, e.type]));
  });
});

describe('migration 2 (events as a rowid table)', () => {
  it('keeps every event, fork and idempotency key of a version-1 file, and the log stays append-only', () => {
    const file = path.join(tmpDir(), 'v1.sqlite');
    const v1 = new Database(file);
    v1.pragma('journal_mode = WAL');
    migrations[0]!(v1);
    v1.pragma('user_version = 1');
    v1.close();
    // Rows as version 1 stored them (this build's log writes the new schema).
    const raw = new Database(file);
    const now = new Date().toISOString();
    raw.prepare(`INSERT INTO sessions (id, created_at, updated_at, status, usage, record) VALUES ('sesn_a', ?, ?, 'idle', '{}', '{}')`).run(now, now);
    raw.prepare(`INSERT INTO sessions (id, created_at, updated_at, parent_id, fork_seq, status, usage, record) VALUES ('sesn_b', ?, ?, 'sesn_a', 1, 'idle', '{}', '{}')`).run(now, now);
    const insert = raw.prepare('INSERT INTO events (session_id, seq, id, type, processed_at, idem_key, body) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const body = (id: string, t: string) => JSON.stringify({ ...text(t), id, processed_at: now });
    insert.run('sesn_a', 1, 'sevt_1', 'user.message', now, 'k1', body('sevt_1', 'one'));
    insert.run('sesn_a', 2, 'sevt_2', 'user.message', now, null, body('sevt_2', 'two'));
    insert.run('sesn_b', 2, 'sevt_3', 'user.message', now, null, body('sevt_3', 'fork two'));
    raw.close();

    const db = openDatabase({ file });
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const log = new SessionLog(db);
    expect(log.getEvents('sesn_a').map((e) => e.content)).toEqual([text('one').content, text('two').content]);
    expect(log.getEvents('sesn_b').map((e) => e.id)).toEqual(['sevt_1', 'sevt_3']);
    expect(log.emitEvent('sesn_a', text('again'), { idempotencyKey: 'k1' }).id).toBe('sevt_1');
    expect(log.emitEvent('sesn_a', text('three')).seq).toBe(3);
    expect(() => db.prepare(`UPDATE events SET body = '{}'`).run()).toThrow(/append-only/);
    expect(() => db.prepare(`DELETE FROM events WHERE session_id = 'sesn_a'`).run()).toThrow(/append-only/);
    expect(() => db.prepare(`INSERT INTO events (session_id, seq, id, type, processed_at, body) VALUES ('sesn_a', 3, 'sevt_x', 't.t', 'x', '{}')`).run()).toThrow(/UNIQUE/);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    log.close();
  });
});
