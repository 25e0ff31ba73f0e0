/**
 * The `docker` hand kind: each connect() provisions a fresh container on a Docker (or Podman)
 * engine; the built-in tools run inside it through the RemoteShell in shell.ts.
 */
import type { RemoteHandKind } from '../remote/types';
import { type DockerConfig, hostLimits, workDirOf } from './config';
import type { ContainerRecords } from './container-records';
import { connectEngine } from './engine';
import { Lifeline } from './lifeline';
import { provisionContainer } from './provision';
import { DockerShell } from './shell';
import { ContainerWatch } from './watch';

export { ContainerRecords, containerRecordDir, removeOrphanContainers, takeContainerRecords, sweepLeftContainers, type OrphanSweep } from './container-records';
export { DockerConfigError, type DockerConfig } from './config';
export { candidates, DockerEngineError } from './engine';
export { DockerImageError, DockerProvisionError } from './provision';
export { DockerShell } from './shell';

/** The docker kind; its connect() gives the concrete shell (container id, endpoint) to callers that want it. */
export interface DockerHandKind extends RemoteHandKind<DockerConfig> {
  connect(config: DockerConfig, ctx: { signal?: AbortSignal; label: string }): Promise<DockerShell>;
}

/**
 * The docker kind. With `records`, every container it makes is on record in the host's data
 * folder while it exists (container-records.ts), so a host killed outright leaves none behind.
 */
export function createDockerHandKind(records?: ContainerRecords): DockerHandKind {
  return {
    kind: 'docker',
    connect: (config, ctx) => connectDocker(config, ctx, records),
    defaultWorkDir: (config) => workDirOf(config),
    describe: (config) => `docker ${config.image}`,
  };
}

/** The docker kind without records (tests, and tools that own no data folder). */
export const dockerHandKind: DockerHandKind = createDockerHandKind();

async function connectDocker(config: DockerConfig, ctx: { signal?: AbortSignal; label: string }, records?: ContainerRecords): Promise<DockerShell> {
  const limits = hostLimits(config);
  const { docker, endpoint } = await connectEngine(config.docker_host, ctx.signal);
  const { container, name } = await provisionContainer(docker, endpoint, config, limits, ctx.label, ctx.signal, records);
  const life = new Lifeline();
  const watch = new ContainerWatch(docker, container, endpoint, life);
  const shell = new DockerShell(docker, container, endpoint, watch, life, records && (() => records.forget(name)));
  try {
    // Not tied to ctx.signal: that belongs to the call that asked for the hand, not to the hand.
    await watch.start();
    ctx.signal?.throwIfAborted();
    // Anything that happened before the event stream was open.
    await watch.check();
  } catch (err) {
    // Its container goes with it: a hand that failed here is never handed out.
    await shell.close();
    throw err;
  }
  return shell;
}
