/**
 * The `docker` hand kind: each connect() provisions a fresh container on a Docker (or Podman)
 * engine; the built-in tools run inside it through the RemoteShell in shell.ts.
 */
import type { RemoteHandKind } from '../remote/types';
import { type DockerConfig, hostLimits, workDirOf } from './config';
import { connectEngine } from './engine';
import { Lifeline } from './lifeline';
import { provisionContainer } from './provision';
import { DockerShell } from './shell';
import { ContainerWatch } from './watch';

export { DockerConfigError, type DockerConfig } from './config';
export { candidates, DockerEngineError } from './engine';
export { DockerImageError, DockerProvisionError } from './provision';
export { DockerShell } from './shell';

/** The docker kind; its connect() gives the concrete shell (container id, endpoint) to callers that want it. */
export interface DockerHandKind extends RemoteHandKind<DockerConfig> {
  connect(config: DockerConfig, ctx: { signal?: AbortSignal; label: string }): Promise<DockerShell>;
}

export const dockerHandKind: DockerHandKind = {
  kind: 'docker',

  async connect(config, ctx) {
    const limits = hostLimits(config);
    const { docker, endpoint } = await connectEngine(config.docker_host, ctx.signal);
    const container = await provisionContainer(docker, endpoint, config, limits, ctx.label, ctx.signal);
    const life = new Lifeline();
    const watch = new ContainerWatch(docker, container, endpoint, life);
    const shell = new DockerShell(docker, container, endpoint, watch, life);
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
  },

  defaultWorkDir: (config) => workDirOf(config),

  describe: (config) => `docker ${config.image}`,
};
