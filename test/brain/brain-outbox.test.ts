import { describe, expect, it } from 'vitest';
import { BrainOutbox } from '../../main/brain/brain-outbox';
import type { HostToBrain } from '../../main/brain/ipc-protocol';

// As child.send with JSON serialisation: a value that cannot be written throws.
function outbox() {
  const written: HostToBrain[] = [];
  const box = new BrainOutbox((m) => {
    written.push(JSON.parse(JSON.stringify(m)) as HostToBrain);
  });
  return { box, written };
}
const ok = (id: number, value: unknown = id) => ({ t: 'res', id, ok: true, value }) as const;

describe('BrainOutbox', () => {
  it('sends at once outside a batch; a batch in one message; kept ones go first in the next', () => {
    const { box, written } = outbox();
    box.send(ok(1));
    box.collect(() => (box.send(ok(2)), box.send(ok(3))), () => false);
    box.collect(() => box.send(ok(4)), () => true);
    expect(written).toEqual([ok(1), { t: 'batch', messages: [ok(2), ok(3)] }]);
    box.send({ t: 'events', events: [] });
    expect(written.at(-1)).toEqual({ t: 'batch', messages: [ok(4), { t: 'events', events: [] }] });
    box.send(ok(5));
    expect(written.at(-1)).toEqual(ok(5));
  });

  it('a value that cannot be sent fails only its own reply, with an error saying so', () => {
    const { box, written } = outbox();
    box.collect(() => (box.send(ok(1)), box.send(ok(2, 10n)), box.send(ok(3))), () => false);
    expect(written.map((m) => m.t === 'res' && [m.id, m.ok])).toEqual([[1, true], [2, false], [3, true]]);
    expect(written[1]).toMatchObject({ error: expect.stringMatching(/could not be sent.*BigInt/) });
  });
});
