/**
 * The window's view of the warm pools is live: watchHandPools (the UI contract's stream) pushes
 * every pool's state as a hand is being made, made ready and taken, on the real docker backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiServiceFor } from '../../main/api/ui/service';
import type { UiHandPoolState } from '../../main/api/ui/contract';
import { createHost, type Host } from '../../main/host';
import { handsEnv } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';

let host: Host;
let docker: Record<string, string>;
const LABEL = `pool-watch-${process.pid}`;

beforeAll(async () => {
  docker = handsEnv('docker');
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-'), handPool: { [LABEL]: 1 } });
  await host.started;
}, 180_000);
afterAll(() => host?.close());

describe('watchHandPools', () => {
  it('pushes the pools now, then as a hand is made, ready and taken', async () => {
    const pushes: UiHandPoolState[][] = [];
    const stop = uiServiceFor(host).watch('watchHandPools', {}, (pools) => pushes.push(pools));
    // The state at once (no pool yet: nothing is configured for an environment that does not exist).
    expect(pushes).toEqual([[]]);
    const env = host.environments.create({ name: LABEL, config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST } as never, metadata: {}, description: null }).id;
    host.hands.pool.fill();
    const of = (p: UiHandPoolState[]) => p.find((s) => s.environment_id === env);
    const until = async (ok: () => boolean, what: string) => {
      for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
      if (!ok()) throw new Error(`no push with ${what}: ${JSON.stringify(pushes.at(-1))}`);
    };
    await until(() => of(pushes.at(-1)!)?.ready === 1, 'a ready hand');
    // Being made was pushed before it was ready, without anyone asking.
    expect(pushes.some((p) => of(p)?.provisioning === 1 && of(p)?.ready === 0)).toBe(true);
    const { session } = host.log.createSession({ environment_id: env, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] } } });
    const r = await host.hands.execute(session.id, undefined, 'bash', { command: 'true' });
    expect(r.isError).toBe(false);
    await until(() => of(pushes.at(-1)!)?.taken === 1, 'the hand taken');
    stop();
    const seen = pushes.length;
    await host.hands.release(session.id, 'main');
    await new Promise((r) => setTimeout(r, 1500)); // the refill starts after 1 s
    expect(pushes.length).toBe(seen);
  }, 120_000);
});
