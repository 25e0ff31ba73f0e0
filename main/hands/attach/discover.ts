/**
 * What this machine offers to attach: the hosts of ~/.ssh/config, Docker/Podman engines on the
 * usual sockets (and DOCKER_HOST) with their images, and the adb server's devices. Each source
 * answers on its own: one that is missing or slow is reported, never a failure of the rest.
 */
import fs from 'node:fs';
import Docker from 'dockerode';
import { serverAddress } from '../adb/config';
import { createServerClient, listDevices } from '../adb/server';
import { candidates, describeConnectError, modemOptions, ping } from '../docker/engine';
import { listSshConfigHosts, type SshConfigHost } from '../ssh';

/** A container engine found on this machine. */
export interface FoundEngine {
  /** `unix:///…`, as docker_host takes it. */
  endpoint: string;
  /** Where it was looked for (`DOCKER_HOST`, `default`, `Podman (system)`, …). */
  from: string;
  kind: 'docker' | 'podman';
  reachable: boolean;
  /** Why not, when it is not reachable. */
  error?: string;
  /** Tagged images on it (what a docker hand can start), up to 50. */
  images: string[];
}

/** An adb device the server lists. */
export interface FoundDevice {
  serial: string;
  state: string;
  model?: string;
}

/** Everything discovery found; `errors` says which source did not answer and why. */
export interface Discovery {
  ssh_hosts: SshConfigHost[];
  engines: FoundEngine[];
  adb: { server: string; devices: FoundDevice[]; error?: string };
}

const TIMEOUT_MS = 3_000;

export async function discoverMachines(opts: { sshConfigFile?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Discovery> {
  const env = opts.env ?? process.env;
  const [ssh_hosts, engines, adb] = await Promise.all([
    listSshConfigHosts(opts.sshConfigFile).catch(() => []),
    findEngines(env),
    findDevices(env),
  ]);
  return { ssh_hosts, engines, adb };
}

async function findEngines(env: NodeJS.ProcessEnv): Promise<FoundEngine[]> {
  const found = await Promise.all(
    candidates(undefined, env).map(async (c): Promise<FoundEngine | undefined> => {
      let parsed: ReturnType<typeof modemOptions>;
      try {
        parsed = modemOptions(c.spec);
      } catch {
        return undefined;
      }
      // A socket that is not there is not an engine to offer; a remote endpoint is tried.
      if (parsed.socket && !fs.existsSync(parsed.socket)) return undefined;
      const endpoint = parsed.socket ? `unix://${parsed.socket}` : c.spec;
      const kind = /podman/i.test(c.spec) || /podman/i.test(c.from) ? 'podman' : 'docker';
      const docker = new Docker(parsed.options);
      try {
        await ping(docker, TIMEOUT_MS);
        const images = (await docker.listImages({ abortSignal: AbortSignal.timeout(TIMEOUT_MS) } as never)) as unknown as { RepoTags?: string[] | null }[];
        const tags = images.flatMap((i) => i.RepoTags ?? []).filter((t) => t && !t.startsWith('<none>'));
        return { endpoint, from: c.from, kind, reachable: true, images: [...new Set(tags)].sort().slice(0, 50) };
      } catch (err) {
        return { endpoint, from: c.from, kind, reachable: false, error: describeConnectError(err), images: [] };
      }
    }),
  );
  return found.filter((e): e is FoundEngine => Boolean(e));
}

async function findDevices(env: NodeJS.ProcessEnv): Promise<Discovery['adb']> {
  const addr = serverAddress({ serial: '' }, env);
  const server = `${addr.host}:${addr.port}`;
  try {
    const devices = await listDevices(createServerClient(addr), addr, AbortSignal.timeout(TIMEOUT_MS));
    return { server, devices: devices.map((d) => ({ serial: d.serial, state: d.state, ...(d.model ? { model: d.model } : {}) })) };
  } catch (err) {
    return { server, devices: [], error: err instanceof Error ? err.message : String(err) };
  }
}
