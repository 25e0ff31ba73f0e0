import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import type { LoggedEvent } from '../../main/session/types';

let t: BrainTestHost;
let ssh: Record<string, string>;
let key: string;
let keyVault: string;
let emptyVault: string;
let credId: string;
/** One line from the middle of the key: it must appear nowhere (a line is enough to find a copy). */
let keyLine: string;

beforeAll(async () => {
  ssh = handsEnv('ssh');
  key = fs.readFileSync(ssh.CORRAL_TEST_SSH_KEY!, 'utf8');
  keyLine = key.split('\n')[2]!;
  // No agent: the only key the host could offer is the vault's (this machine's ~/.ssh has none).
  delete process.env.SSH_AUTH_SOCK;
  t = await startBrainHost(script, { hostOptions: { sandbox: false } });
  await t.host.started;
  keyVault = t.host.vault.createVault({ display_name: 'keys' }).id;
  credId = (await t.host.vault.createCredential(keyVault, { display_name: 'deploy key', auth: { type: 'ssh_private_key', private_key: key, hosts: [ssh.CORRAL_TEST_SSH_HOST!] } })).id;
  emptyVault = t.host.vault.createVault({ display_name: 'nothing' }).id;
}, 180_000);
afterAll(async () => {
  await t?.close();
});

function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo "user=$(id -un)"; env; ls -la ~ 2>&1; grep -rl "PRIVATE KEY" ~ 2>/dev/null; echo grep-done' } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

async function run(vaultId: string, identityCredential?: string): Promise<LoggedEvent[]> {
  // No identity_file: the environment names no key file; the session's vaults provide the key.
  const env = t.host.environments.create({
    name: `ssh-vault-${vaultId}-${identityCredential ?? ''}`,
    config: {
      type: 'ssh',
      host: ssh.CORRAL_TEST_SSH_HOST,
      port: Number(ssh.CORRAL_TEST_SSH_PORT),
      user: ssh.CORRAL_TEST_SSH_USER,
      ...(identityCredential ? { identity_credential_id: identityCredential } : {}),
    },
    metadata: {},
    description: null,
  });
  const { session } = t.host.log.createSession({ environment_id: env.id, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, vault_ids: [vaultId] } });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'look around' }] });
  return t.settled(session.id, 120_000);
}

describe('ssh_private_key credentials: SSH hands log in with the vault\'s key, which never reaches the hand or the log', () => {
  it('logs in with the key from the session\'s vault and records the login in the ledger', async () => {
    const events = await withBackendTurn('ssh', () => run(keyVault));
    const out = textOf(events.find((e) => e.type === 'agent.tool_result'));
    expect(out).toContain(`user=${ssh.CORRAL_TEST_SSH_USER}`);
    expect(out).toContain('grep-done');
    expect(out).not.toContain(keyLine);
    expect(JSON.stringify(events)).not.toContain(keyLine);
    const used = events.filter((e) => e.type === 'vault.credential_used');
    expect(used).toHaveLength(1);
    expect(used[0]).toMatchObject({ credential_id: credId, vault_id: keyVault, kind: 'ssh_private_key', purpose: 'ssh', target: `ssh ${ssh.CORRAL_TEST_SSH_USER}@${ssh.CORRAL_TEST_SSH_HOST}:${ssh.CORRAL_TEST_SSH_PORT}` });
    const ready = events.find((e) => e.type === 'hand.ready');
    expect(JSON.stringify(ready)).not.toContain(keyLine);
  }, 180_000);

  it('without the credential in the session\'s vaults the same environment cannot log in', async () => {
    const events = await withBackendTurn('ssh', () => run(emptyVault));
    const lost = events.find((e) => e.type === 'hand.lost');
    expect(String(lost?.reason)).toMatch(/No usable private key|Authentication failed/);
    expect(events.some((e) => e.type === 'vault.credential_used')).toBe(false);
  }, 180_000);

  it('an environment naming the credential (identity_credential_id) logs in with that one only; a name the session may not use fails, saying so', async () => {
    // A second key in the same vault, listed first, that the server does not accept.
    const other = (
      await t.host.vault.createCredential(keyVault, {
        display_name: 'unrelated key',
        auth: { type: 'ssh_private_key', private_key: generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey, hosts: [ssh.CORRAL_TEST_SSH_HOST!] },
      })
    ).id;
    const good = await withBackendTurn('ssh', () => run(keyVault, credId));
    expect(textOf(good.find((e) => e.type === 'agent.tool_result'))).toContain(`user=${ssh.CORRAL_TEST_SSH_USER}`);
    expect(good.filter((e) => e.type === 'vault.credential_used').map((e) => e.credential_id)).toEqual([credId]);
    // Naming the key the server refuses: only it is offered (no fallback to the right one).
    const wrong = await withBackendTurn('ssh', () => run(keyVault, other));
    expect(String(wrong.find((e) => e.type === 'hand.lost')?.reason)).toMatch(/Authentication failed/);
    // Naming the right key from a session whose vaults do not hold it.
    const outside = await withBackendTurn('ssh', () => run(emptyVault, credId));
    expect(String(outside.find((e) => e.type === 'hand.lost')?.reason)).toContain(`identity_credential_id ${credId} is not an ssh_private_key this session may use`);
    await t.host.vault.deleteCredential(keyVault, other);
  }, 180_000);
});
