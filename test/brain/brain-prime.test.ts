/**
 * A pooled brain bound with its first reads (brain-prime.ts): the view takes the log's first page
 * from the bind and reads nothing more when that page is the whole log; a longer log is read on
 * from where the page ends. brainPrime reads the page, the agent and the hands from a real log.
 */
import { describe, expect, it } from 'vitest';
import { brainPrime } from '../../main/brain/brain-prime';
import { SessionView } from '../../main/brain/session-view';
import { createHost } from '../../main/host';
import type { EventSlice, LoggedEvent } from '../../main/session/types';
import { tmpDir } from '../helpers/tmp';

const msg = (seq: number): LoggedEvent => ({ id: `sevt_${seq}`, processed_at: '', seq, type: 'user.message', content: [{ type: 'text', text: `m${seq}` }] }) as LoggedEvent;
const all = (n: number) => Array.from({ length: n }, (_, i) => msg(i + 1));

function reader(log: LoggedEvent[]) {
  const reads: EventSlice[] = [];
  const read = async (slice: EventSlice) => {
    reads.push(slice);
    const lo = Math.max((slice.after ?? 0) + 1, slice.from ?? 1);
    const hi = Math.min(slice.to ?? Infinity, lo + (slice.limit ?? 1000) - 1);
    return { events: log.filter((e) => e.seq >= lo && e.seq <= hi), more: false };
  };
  return { read, reads };
}

describe('a brain primed at bind', () => {
  it('takes a whole short log from the bind and reads nothing; what follows comes as appended', async () => {
    const { read, reads } = reader(all(3));
    const view = new SessionView(read);
    view.prime({ events: all(3), more: false });
    await view.catchUp();
    expect(reads).toEqual([]);
    expect(view.lastSeq).toBe(3);
    view.accept([msg(4)]);
    await view.catchUp();
    expect(view.lastSeq).toBe(4);
    expect(reads).toEqual([]);
  });

  it('reads on from where a page cut short ends', async () => {
    const log = all(1500);
    const { read, reads } = reader(log);
    const view = new SessionView(read);
    view.prime({ events: log.slice(0, 1000), more: false });
    await view.catchUp();
    expect(view.lastSeq).toBe(1500);
    expect(reads[0]!.from).toBe(1001);
  });

  it('reads the first page, the agent and the hands from the log', async () => {
    const host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
    try {
      const { session } = host.log.createSession({ record: { agent: { model: { id: 'm' }, name: 'primed' } } });
      host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'hello' }] });
      const p = brainPrime(host.log, host.hands, session.id)!;
      expect(p.page.events.map((e) => e.type)).toContain('user.message');
      expect(p.page.more).toBe(false);
      expect(p.agent).toMatchObject({ name: 'primed' });
      expect(p.hands).toEqual(host.hands.list(session.id));
      expect(brainPrime(host.log, host.hands, 'sesn_missing')).toBeUndefined();
    } finally {
      await host.close();
    }
  });
});
