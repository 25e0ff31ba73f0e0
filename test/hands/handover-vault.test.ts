import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';

// A hand that holds its session's egress proxy (with the session's capability) must not pass
// live to a session that may not use that vault: the receiver's agent would use the giver's
// credentials. A hand of a session without vault routes still passes live.
const VALUE = `handover-secret-${Math.random().toString(36).slice(2)}`;
let t: BrainTestHost;
let vaultId: string;
beforeAll(async () => {
  t = await startBrainHost(script, { hostOptions: { sandbox: false } });
  await t.host.started;
  vaultId = t.host.vault.createVault({ display_name: 'apis' }).id;
  await t.host.vault.createCredential(vaultId, {
    display_name: 'api',
    auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: VALUE, networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] } },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** The model runs one command on the hand named 'box' and stops. */
function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo "proxy=${HTTP_PROXY:+set}"', hand: 'box' } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

async function sessionWithBox(vaultIds: string[]): Promise<{ id: string; out: string }> {
  const env = t.host.environments.create({ name: `local-${vaultIds.length}`, config: { type: 'local', sandbox: false }, metadata: {}, description: null });
  const agent = { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] };
  const { session } = t.host.log.createSession({ environment_id: env.id, record: { agent, vault_ids: vaultIds } });
  t.host.hands.attach(session.id, env.id, 'box');
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  const events = await t.settled(session.id, 60_000);
  return { id: session.id, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}

describe('handing over a hand that carries its session vault routes', () => {
  it('is refused live with a reason, and the hand stays with its session', async () => {
    const giver = await sessionWithBox([vaultId]);
    expect(giver.out).toContain('proxy=set');
    const receiver = t.host.log.createSession().session.id;
    expect(() => t.host.hands.handOver(giver.id, 'box', receiver, 'borrowed')).toThrow(/cannot be handed over live: its environment holds the session's egress proxy/);
    expect(t.host.hands.list(giver.id).map((h) => h.name)).toContain('box');
    expect(t.host.hands.list(receiver).map((h) => h.name)).not.toContain('borrowed');
    expect(t.host.log.getEvents(receiver).some((e) => e.type === 'hand.received')).toBe(false);
  });

  it('a hand of a session without vault routes still passes live', async () => {
    const giver = await sessionWithBox([]);
    expect(giver.out).toContain('proxy=');
    expect(giver.out).not.toContain('proxy=set');
    const receiver = t.host.log.createSession().session.id;
    t.host.hands.handOver(giver.id, 'box', receiver, 'borrowed');
    const received = t.host.log.getEvents(receiver).find((e) => e.type === 'hand.received');
    expect(received?.live).toBe(true);
  });
});
