/**
 * The hands panel's calls: every drop and drag is checked here, in the host, whatever the
 * window already checked. A dropped key goes to the vault (never to a file, an event or back to
 * the window); a dropped config is read for hosts; a host key is trusted only once the user has
 * seen and accepted it; hands move between sessions by the registry's rules.
 */
import os from 'node:os';
import path from 'node:path';
import type { Host } from '../../../host';
import { parseDroppedSshConfig, DropError } from '../../../hands/attach/dropped-config';
import { inspectDroppedKey, PassphraseNeeded } from '../../../hands/attach/dropped-key';
import { discoverMachines } from '../../../hands/attach/discover';
import { acceptHostKey, probeSshHost, type ProbeTarget } from '../../../hands/attach/probe';
import { checkMachine } from '../../../hands/attach/check-machine';
import { defaultKnownHostsFiles } from '../../../hands/ssh/config';
import type { VaultSshKey } from '../../../hands/ssh/keys';
import { normalizeEnvironmentConfig } from '../../http/schemas/environments';
import type { HostCalls } from '../service';
import type { MachineCallName } from '../machines-contract';
import { handsOf } from './sessions';
import { missing, refuse } from './errors';
import { vaultCall } from './vaults';
import { sshKeysFor } from '../../../vault/ssh-keys';

type MachineCalls = Pick<HostCalls, MachineCallName>;

/** Corral's own known_hosts (the registry's SSH kind checks and writes the same file). */
export const trustStoreOf = (dataDir: string) => path.join(dataDir, 'ssh', 'known_hosts');

/** Refusals of dropped files and connection tests become the window's `invalid_input`. */
async function dropCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DropError || err instanceof PassphraseNeeded) throw refuse(err.message);
    throw err;
  }
}

export function machineCalls(host: Pick<Host, 'vault' | 'environments' | 'hands' | 'log' | 'dataDir'>): MachineCalls {
  const { vault } = host;
  const trustStore = trustStoreOf(host.dataDir);
  const target = (i: { host: string; port?: number; user: string }): ProbeTarget => ({
    host: i.host,
    port: i.port ?? 22,
    user: i.user,
    knownHostsFiles: [...defaultKnownHostsFiles(os.homedir()), trustStore],
  });
  /** The vault holding a credential (ids are unique across vaults). */
  const vaultOfCredential = (credentialId: string): string => {
    for (const v of vault.listVaults({ limit: 1000 }).data) if (vault.getCredential(v.id, credentialId)) return v.id;
    throw missing('credential', credentialId);
  };
  const keysFor = async (host: string, credentialId: string | undefined): Promise<VaultSshKey[]> => {
    const found = await sshKeysFor(vault, undefined, host, credentialId ? { vaultId: vaultOfCredential(credentialId), id: credentialId } : undefined);
    if (credentialId && found.length === 0) throw refuse(`credential '${credentialId}' is not a usable SSH key`);
    // A test login is not a session's use: only the credential's last use is touched.
    return found.map((c) => ({ name: `(${c.credential.id})`, privateKey: c.secret.private_key, passphrase: c.secret.passphrase, used: (t: string) => c.recordUse(t) }));
  };
  const liveSession = (id: string, verb: string) => {
    const s = host.log.getSession(id);
    if (s.archived_at) throw refuse(`session '${id}' is archived; it cannot ${verb} hands`);
  };

  return {
    discoverMachines: () => discoverMachines(),

    readDroppedFile: ({ name, text, passphrase }) =>
      dropCall(async () => {
        const looksLikeKey = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text) || /^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-\S+) AAAA/m.test(text);
        if (!looksLikeKey) return { kind: 'ssh_config' as const, hosts: parseDroppedSshConfig(text, name) };
        let info;
        try {
          info = inspectDroppedKey(text, passphrase, name);
        } catch (err) {
          if (err instanceof PassphraseNeeded) return { kind: 'needs_passphrase' as const, message: err.message };
          throw err;
        }
        return vaultCall(async () => {
          const vaultId = vault.defaultVaultId() ?? vault.createVault({ display_name: 'Machines', is_default: true }).id;
          // The same key dropped again is the credential already there, not a second copy.
          const same = vault.listCredentials(vaultId, { limit: 1000 }).data.find((c) => c.auth.type === 'ssh_private_key' && c.auth.fingerprint === info.fingerprint);
          const c = same ?? (await vault.createCredential(vaultId, { display_name: name, auth: { type: 'ssh_private_key', private_key: text, ...(passphrase ? { passphrase } : {}), hosts: [] } }));
          return { kind: 'ssh_key' as const, credential: { id: c.id, vault_id: vaultId, display_name: c.display_name, key_type: info.key_type, fingerprint: info.fingerprint, reused: Boolean(same) } };
        });
      }),

    testSshHost: (i) => dropCall(async () => probeSshHost(target(i), await keysFor(i.host, i.credentialId))),

    trustHostKey: (i) => dropCall(() => acceptHostKey(target(i), i.fingerprint, trustStore)),

    attachMachine: ({ name, machine }) =>
      dropCall(async () => {
        await checkMachine(machine, target);
        if (machine.type === 'ssh' && machine.credentialId) {
          // The key is offered to this host from now on; a key for "any host" is narrowed to it.
          const vaultId = vaultOfCredential(machine.credentialId);
          const hosts = (vault.getCredential(vaultId, machine.credentialId)!.auth.hosts as string[] | undefined) ?? [];
          if (!hosts.includes(machine.host)) await vaultCall(() => vault.updateCredential(vaultId, machine.credentialId!, { auth: { type: 'ssh_private_key', hosts: [...hosts, machine.host] } }));
        }
        const { credentialId: _c, ...config } = machine as typeof machine & { credentialId?: string };
        const env = host.environments.create({ name, description: null, metadata: { 'corral.attached_by': 'hands panel' }, config: normalizeEnvironmentConfig(config as never), scope: 'organization' });
        return { id: env.id, name: env.record.name as string, config: env.record.config as { type: string } };
      }),

    giveHand: ({ sessionId, environmentId, name }) => {
      liveSession(sessionId, 'take');
      host.hands.attach(sessionId, environmentId, name);
      return handsOf(host, sessionId);
    },

    handOverHand: ({ fromSessionId, name, toSessionId, as }) => {
      host.log.getSession(fromSessionId);
      liveSession(toSessionId, 'take');
      host.hands.handOver(fromSessionId, name, toSessionId, as ?? name);
      return { from: handsOf(host, fromSessionId), to: handsOf(host, toSessionId) };
    },
  };
}
