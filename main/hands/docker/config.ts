/**
 * The `docker` environment config and what it asks of the engine: the container's limits and
 * network, checked before anything is created so a bad value is a clear error, not an engine one.
 */

/** The `docker` environment config (structurally the API's `{type: 'docker', …}` config). */
export interface DockerConfig {
  type?: 'docker';
  /** The image to start, e.g. `debian:bookworm`. It must already be on the engine: Corral never pulls. */
  image: string;
  /** The work folder inside the container (default `/work`); created at provisioning. */
  working_dir?: string;
  /** `none` (default) leaves the container only loopback. */
  network?: 'none' | 'bridge' | 'host';
  memory_mb?: number;
  cpus?: number;
  /** Docker API endpoint (`unix:///path`, `tcp://host:port`, or a socket path); default `DOCKER_HOST` or the usual sockets. */
  docker_host?: string;
}

export const DEFAULT_WORK_DIR = '/work';

/** Raised for a config the engine would refuse or misread. */
export class DockerConfigError extends Error {}

/** The parts of a container's HostConfig the config decides. */
export interface HostLimits {
  NetworkMode: 'none' | 'bridge' | 'host';
  Memory?: number;
  MemorySwap?: number;
  NanoCpus?: number;
}

/** Docker refuses less than 6 MiB; the API schema asks for at least 16. */
const MIN_MEMORY_MB = 6;

/** Checks the config and turns it into container limits; throws DockerConfigError saying what is wrong. */
export function hostLimits(config: DockerConfig): HostLimits {
  if (typeof config.image !== 'string' || config.image.trim() === '') throw new DockerConfigError('the docker config needs an image (e.g. "debian:bookworm")');
  const network = config.network ?? 'none';
  if (!['none', 'bridge', 'host'].includes(network)) throw new DockerConfigError(`network must be none, bridge or host (got ${JSON.stringify(config.network)})`);
  const wd = config.working_dir;
  if (wd !== undefined && (typeof wd !== 'string' || !wd.startsWith('/'))) throw new DockerConfigError(`working_dir must be an absolute path inside the container (got ${JSON.stringify(wd)})`);
  const limits: HostLimits = { NetworkMode: network };
  if (config.memory_mb !== undefined) {
    const mb = config.memory_mb;
    if (typeof mb !== 'number' || !Number.isInteger(mb) || mb < MIN_MEMORY_MB) {
      throw new DockerConfigError(`memory_mb must be a whole number of MiB, at least ${MIN_MEMORY_MB} (got ${JSON.stringify(mb)})`);
    }
    limits.Memory = mb * 1024 * 1024;
    // Swap as large as the limit would double it; the container gets exactly what was asked.
    limits.MemorySwap = limits.Memory;
  }
  if (config.cpus !== undefined) {
    const cpus = config.cpus;
    if (typeof cpus !== 'number' || !Number.isFinite(cpus) || cpus < 0.01) throw new DockerConfigError(`cpus must be a number of CPUs, at least 0.01 (got ${JSON.stringify(cpus)})`);
    limits.NanoCpus = Math.round(cpus * 1e9);
  }
  return limits;
}

export const workDirOf = (config: DockerConfig) => config.working_dir ?? DEFAULT_WORK_DIR;
