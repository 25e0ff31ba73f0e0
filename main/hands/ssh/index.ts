/**
 * The SSH hand kind: a host the user can reach with ssh, its tools run there through
 * createShellHand. Scripts can use it directly:
 *
 *   const shell = await sshHandKind.connect({ host: '127.0.0.1', port: 2222, user: 'me', identity_file: '/path/key' }, { label: 'bench' });
 *   await shell.exec('echo hi', { onOutput: (b) => process.stdout.write(b) });
 *   await shell.close();
 */
import type { RemoteHandKind } from '../remote/types';
import { targetLabel, type SshConfig } from './config';
import { connectSsh, workDirFor, type SshConnectOptions } from './connect';
import type { SshShell } from './shell';

export { connectSsh, workDirFor, KEEPALIVE_COUNT_MAX, KEEPALIVE_INTERVAL_MS, READY_TIMEOUT_MS, type SshConnectOptions } from './connect';
export { resolveTarget, type SshConfig, type SshTarget } from './config';
export { SshConnectError, type SshConnectErrorCode } from './errors';
export type { HostKeyInfo } from './known-hosts';
export { listSshConfigHosts, type SshConfigHost } from './ssh-config-file';
export { SshShell } from './shell';

/** Remote homes seen at connect, so defaultWorkDir (which only gets the config) can answer. */
const homes = new Map<string, string>();
const homeKey = (c: SshConfig) => JSON.stringify([c.ssh_config_host ?? null, c.host, c.port ?? null, c.user ?? null]);

export interface SshHandKind extends RemoteHandKind<SshConfig> {
  connect(config: SshConfig, ctx: { signal?: AbortSignal; label: string } & Omit<SshConnectOptions, 'signal'>): Promise<SshShell>;
}

export const sshHandKind: SshHandKind = {
  kind: 'ssh',

  async connect(config, ctx) {
    const { label: _label, ...opts } = ctx;
    const shell = await connectSsh(config, opts);
    homes.set(homeKey(config), shell.home);
    return shell;
  },

  /**
   * `<remote home>/corral-work`, or working_dir (absolute, or relative to the home). The home is
   * learnt at connect: before the first connect a relative or default folder cannot be known
   * and this throws (the shell's `workDir` has the same answer).
   */
  defaultWorkDir(config) {
    const home = homes.get(homeKey(config));
    if (home) return workDirFor(config, home);
    if (config.working_dir?.startsWith('/')) return workDirFor(config, '/');
    throw new Error(`The work folder of ${targetLabel(config)} is known only after connecting (it is under the remote home).`);
  },

  describe(config) {
    return `ssh ${targetLabel(config)}`;
  },
};

/**
 * The SSH kind as the host uses it: host keys first seen are remembered in `trustStore` (a
 * known_hosts file of Corral's), so a host whose key changes later is refused.
 */
export function sshHandKindWithTrustStore(trustStore: string): SshHandKind {
  return { ...sshHandKind, connect: (config, ctx) => sshHandKind.connect(config, { trustStore, ...ctx }) };
}
