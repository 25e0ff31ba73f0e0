import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';

/** An agent's model config (effort, speed, inference_geo) reaches every model request as the Messages API's parameters. */

let t: BrainTestHost;
beforeAll(async () => {
  t = await startBrainHost([{ blocks: [{ type: 'text', text: 'ok' }] }, { blocks: [{ type: 'text', text: 'plain' }] }]);
});
afterAll(() => t.close());

it('sends output_config.effort, speed and inference_geo, and nothing when the config has none', async () => {
  await t.settled(t.newSession('hi', { model: { id: 'claude-test', effort: { type: 'high' }, speed: 'fast', inference_geo: 'us' } }));
  const body = t.model.requests.at(-1)!.body;
  expect(body).toMatchObject({ model: 'claude-test', output_config: { effort: 'high' }, speed: 'fast', inference_geo: 'us' });
  await t.settled(t.newSession('hi again'));
  const plain = t.model.requests.at(-1)!.body;
  expect(plain.output_config).toBeUndefined();
  expect(plain.speed).toBeUndefined();
  expect(plain.inference_geo).toBeUndefined();
});
