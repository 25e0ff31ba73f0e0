import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { HandRequestError } from '../../main/hands/membership';
import { SessionNotFoundError } from '../../main/session/types';
import { tmpDir } from '../helpers/tmp';

// The registry owns which hands a session holds: it keeps them in memory as it writes the
// hand.* events, rebuilds them from the log after a restart, and enforces the rules itself
// (the HTTP routes only translate). No brains or model here: just the registry and a real log.
let host: Host | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

const localEnv = (h: Host, dir = tmpDir()) => h.environments.create({ name: 'box', config: { type: 'local', working_dir: dir }, metadata: {}, description: null });

describe('hand membership', () => {
  it('follows attach, hand-over and release, and is rebuilt from the log by a new host', async () => {
    const dataDir = tmpDir();
    host = createHost({ dataDir });
    const box = localEnv(host);
    const a = host.log.createSession().session.id;
    const b = host.log.createSession().session.id;
    host.hands.attach(a, box.id, 'box');
    host.hands.attach(a, box.id, 'spare');
    host.hands.handOver(a, 'box', b, 'borrowed');
    await host.hands.release(a, 'spare');
    const names = (h: Host, id: string) => h.hands.list(id).map((x) => x.name);
    expect(names(host, a)).toEqual(['main']);
    expect(names(host, b)).toEqual(['main', 'borrowed']);

    // A fork made now holds what its parent held at the fork point.
    const fork = host.log.forkSession(b, host.log.getSession(b).last_seq).id;
    expect(names(host, fork)).toEqual(['main', 'borrowed']);

    await host.close();
    host = createHost({ dataDir });
    expect(names(host, a)).toEqual(['main']);
    expect(names(host, b)).toEqual(['main', 'borrowed']);
    expect(host.hands.list(b)[1]).toMatchObject({ kind: 'local' });
  });

  it('refuses what its rules forbid, with a reason, and writes nothing', async () => {
    host = createHost({ dataDir: tmpDir() });
    const box = localEnv(host);
    const a = host.log.createSession().session.id;
    const b = host.log.createSession().session.id;
    host.hands.attach(a, box.id, 'box');
    const before = [host.log.getSession(a).last_seq, host.log.getSession(b).last_seq];

    const refused = (fn: () => unknown, kind: HandRequestError['kind'], message: RegExp) => {
      const err = (() => {
        try {
          fn();
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(HandRequestError);
      expect((err as HandRequestError).kind).toBe(kind);
      expect((err as Error).message).toMatch(message);
    };
    refused(() => host!.hands.attach(a, 'env_nope', 'x'), 'not_found', /environment 'env_nope' was not found/);
    refused(() => host!.hands.attach(a, box.id, 'box'), 'invalid', /already has a hand named 'box'/);
    refused(() => host!.hands.handOver(a, 'nope', b, 'nope'), 'not_found', /hand 'nope'/);
    refused(() => host!.hands.handOver(a, 'box', a, 'again'), 'invalid', /session that holds it/);
    host.hands.attach(b, box.id, 'taken');
    refused(() => host!.hands.handOver(a, 'box', b, 'taken'), 'invalid', /already has a hand named 'taken'/);
    await expect(host.hands.release(a, 'nope')).rejects.toBeInstanceOf(HandRequestError);
    host.environments.archive(box.id);
    refused(() => host!.hands.attach(a, box.id, 'late'), 'invalid', /archived/);
    expect(() => host!.hands.attach('sesn_nope', box.id, 'x')).toThrow(SessionNotFoundError);
    expect(() => host!.hands.list('sesn_nope')).toThrow(SessionNotFoundError);

    expect(host.log.getSession(a).last_seq).toBe(before[0]);
    expect(host.log.getSession(b).last_seq).toBe(before[1]! + 1); // only the 'taken' attach
  });
});
