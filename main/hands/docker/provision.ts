/**
 * Provisioning: a fresh container from the config's image (which must already be on the
 * engine: no registry may be reachable, so nothing is pulled), started with a long-running
 * init, with the work folder made inside. A failure removes whatever was created.
 */
import crypto from 'node:crypto';
import type Docker from 'dockerode';
import { removeContainer, type ContainerRecords } from './container-records';
import { describeConnectError } from './engine';
import { startExec } from './exec';
import { DockerConfigError, type DockerConfig, type HostLimits, workDirOf } from './config';

/** Raised when the image is not on the engine. */
export class DockerImageError extends Error {}

/** Raised when the engine refuses or cannot start the container. */
export class DockerProvisionError extends Error {}

/** Where a hand's persistent shell notes its process group, for INIT to Ctrl-C it (persistent.ts). */
export const SHELL_PGID_FILE = '/tmp/.corral-shell-pgid';

/**
 * PID 1 of every hand: waits forever, exits at once on TERM (so a stop is quick), and reaps
 * orphans (a shell waiting for its child collects any child of its own, unlike `sleep infinity`,
 * under which killed commands would stay zombies). On USR1 it sends SIGINT to the group the
 * persistent shell noted: a Ctrl-C is then one signal through the engine's API, not an exec
 * (an exec costs 100-150 ms idle and up to a second under load, Podman's the most).
 */
const INIT = [
  '/bin/sh',
  '-c',
  // (Only a group id is signalled: whatever else a command may have written there, `-1` above all, is not.)
  `trap "exit 0" TERM INT HUP; trap 'read -r g < ${SHELL_PGID_FILE} && case $g in ""|*[!0-9]*|0|1) ;; *) kill -INT -"$g" 2>/dev/null;; esac' USR1; while :; do sleep 3600 & s=$!; wait $s; kill $s 2>/dev/null; done`,
];

const statusOf = (err: unknown) => (err as { statusCode?: number }).statusCode;
/** The engine's own words from a dockerode error (`(HTTP code 400) bad parameter - <words>`). */
const engineWords = (err: unknown) => {
  const json = (err as { json?: { message?: string } }).json;
  return (json?.message ?? describeConnectError(err)).trim();
};

/** `work`, or a rejection when `signal` aborts or `ms` pass first (for calls dockerode cannot abort). */
function withDeadline<T>(work: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  const sig = signal ? AbortSignal.any([signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(sig.reason);
    if (sig.aborted) return stop();
    sig.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => sig.removeEventListener('abort', stop));
  });
}

/** A container name people can recognise: `corral-<label>-<random>`. */
export function containerName(label: string): string {
  const base = label.toLowerCase().replace(/[^a-z0-9_.-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 40).replace(/[-_.]+$/, '');
  return `corral-${base ? `${base}-` : ''}${crypto.randomBytes(4).toString('hex')}`;
}

async function checkImage(docker: Docker, endpoint: string, image: string, signal?: AbortSignal): Promise<void> {
  try {
    await withDeadline(docker.getImage(image).inspect(), 30_000, signal);
  } catch (err) {
    signal?.throwIfAborted();
    if (statusOf(err) === 404) {
      throw new DockerImageError(
        `The image '${image}' is not on the Docker engine at ${endpoint}. Corral does not pull images: pull or build it on that engine first (docker pull ${image}).`,
      );
    }
    throw new DockerProvisionError(`Cannot look up the image '${image}' on the Docker engine at ${endpoint}: ${engineWords(err)}`);
  }
}

/**
 * Docker refuses a cpus limit above the engine machine's CPU count; Podman accepts it, and the
 * limit then limits nothing. Checked here against the engine's own count (`NCPU` of /info, which
 * both report) so every engine gives the same clear error. An engine that does not say is not checked.
 */
async function checkCpus(docker: Docker, endpoint: string, config: DockerConfig, limits: HostLimits, signal?: AbortSignal): Promise<void> {
  if (limits.NanoCpus === undefined) return;
  let ncpu: unknown;
  try {
    ncpu = ((await withDeadline(docker.info(), 30_000, signal)) as { NCPU?: unknown }).NCPU;
  } catch {
    signal?.throwIfAborted();
    return;
  }
  if (typeof ncpu === 'number' && ncpu > 0 && limits.NanoCpus > ncpu * 1e9) {
    throw new DockerConfigError(`cpus ${config.cpus} is more than the ${ncpu} CPUs of the Docker engine at ${endpoint}`);
  }
}

export async function provisionContainer(
  docker: Docker,
  endpoint: string,
  config: DockerConfig,
  limits: HostLimits,
  label: string,
  signal?: AbortSignal,
  records?: ContainerRecords,
): Promise<{ container: Docker.Container; name: string }> {
  const image = config.image;
  // Both questions at once: Podman's /info takes a moment.
  await Promise.all([checkImage(docker, endpoint, image, signal), checkCpus(docker, endpoint, config, limits, signal)]);

  const name = containerName(label);
  // On record before it exists: a host killed from here on leaves nothing the next one misses.
  await records?.add(name, endpoint);
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      name,
      Image: image,
      Entrypoint: INIT.slice(0, 1),
      Cmd: INIT.slice(1),
      Labels: { 'corral.hand': '1', 'corral.label': label },
      Tty: false,
      OpenStdin: false,
      HostConfig: { ...limits, AutoRemove: false },
      // No abortSignal: an aborted request may still create the container, unseen. Aborts are
      // honoured between steps, where what exists is known and removed.
    } as Docker.ContainerCreateOptions);
  } catch (err) {
    // Refused by the engine: nothing was made. Any other failure (a cut connection) may have
    // made it after all, so its record stays for the next start to look.
    if (statusOf(err) !== undefined) await records?.forget(name);
    signal?.throwIfAborted();
    const words = engineWords(err);
    if (/memory|cpu|nanocpu/i.test(words)) throw new DockerConfigError(`The Docker engine refused the limits (memory_mb ${config.memory_mb ?? 'unset'}, cpus ${config.cpus ?? 'unset'}): ${words}`);
    throw new DockerProvisionError(`The Docker engine at ${endpoint} refused to create a container from '${image}': ${words}`);
  }

  const discard = async () => {
    if ((await removeContainer(container, 10_000)).gone) await records?.forget(name);
  };
  try {
    signal?.throwIfAborted();
    await container.start();
    signal?.throwIfAborted();
    const workDir = workDirOf(config);
    const err: Buffer[] = [];
    const made = await startExec(docker, container, ['/bin/sh', '-c', 'mkdir -p "$1"', 'sh', workDir], { onStdout: (c) => err.push(c), onStderr: (c) => err.push(c) }).done;
    signal?.throwIfAborted();
    if (made.error) throw made.error;
    if (made.exitCode !== 0) throw new DockerProvisionError(`Cannot make the work folder ${workDir} in the container: ${Buffer.concat(err).toString('utf8').trim() || `exit code ${made.exitCode}`}`);
    return { container, name };
  } catch (err) {
    await discard();
    if (signal?.aborted) throw signal.reason ?? err;
    if (err instanceof DockerProvisionError) throw err;
    const words = engineWords(err);
    if (/memory|cpu/i.test(words)) throw new DockerConfigError(`The container could not start with the limits asked (memory_mb ${config.memory_mb ?? 'unset'}, cpus ${config.cpus ?? 'unset'}): ${words}`);
    throw new DockerProvisionError(`The container from '${image}' did not start: ${words}${/sh.*(not found|no such file)/i.test(words) ? ' (Corral needs an image with /bin/sh)' : ''}`);
  }
}
