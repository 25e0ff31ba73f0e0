/**
 * Finding the Docker engine: the config's `docker_host`, else `DOCKER_HOST`, else the usual
 * sockets (Docker's, Podman's, Docker Desktop's), the first that exists and answers. An engine
 * that cannot be reached is a clear error naming every place that was tried.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';

/** How long a ping may take before the engine counts as not answering. */
export const PING_TIMEOUT_MS = 5_000;

/** Raised when no engine answers. */
export class DockerEngineError extends Error {}

/** A place an engine may listen, as written by people (`unix:///var/run/docker.sock`). */
export interface Candidate {
  spec: string;
  /** Where it came from, for the error message. */
  from: string;
}

/** A connected engine. */
export interface Engine {
  docker: Docker;
  /** The endpoint, as people write it. */
  endpoint: string;
}

/** The places to look, in order. With `docker_host` in the config, only that one. */
export function candidates(dockerHost: string | undefined, env: NodeJS.ProcessEnv = process.env): Candidate[] {
  if (dockerHost) return [{ spec: dockerHost, from: 'docker_host in the config' }];
  const list: Candidate[] = [];
  if (env.DOCKER_HOST) list.push({ spec: env.DOCKER_HOST, from: 'DOCKER_HOST' });
  list.push({ spec: 'unix:///var/run/docker.sock', from: 'default' });
  if (env.XDG_RUNTIME_DIR) list.push({ spec: `unix://${path.join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock')}`, from: 'Podman (user)' });
  list.push({ spec: 'unix:///run/podman/podman.sock', from: 'Podman (system)' });
  list.push({ spec: `unix://${path.join(env.HOME || os.homedir(), '.docker', 'run', 'docker.sock')}`, from: 'Docker Desktop' });
  return list.filter((c, i) => list.findIndex((o) => o.spec === c.spec) === i);
}

/** dockerode options for one endpoint; `socket` is set for local sockets (which can be checked for existence). */
export function modemOptions(spec: string): { options: Docker.DockerOptions; socket?: string } {
  const s = spec.trim();
  if (s.startsWith('/')) return { options: { socketPath: s, host: undefined }, socket: s };
  const m = /^([a-z]+):\/\/(.*)$/i.exec(s);
  if (!m) throw new DockerEngineError(`'${spec}' is not a Docker endpoint (use unix:///path/to/docker.sock, tcp://host:port or ssh://user@host)`);
  const scheme = m[1]!.toLowerCase();
  if (scheme === 'unix' || scheme === 'npipe') {
    if (!m[2]) throw new DockerEngineError(`'${spec}' names no socket path`);
    return { options: { socketPath: m[2], host: undefined }, socket: scheme === 'unix' ? m[2] : undefined };
  }
  let url: URL;
  try {
    url = new URL(s.replace(/^tcp:/i, 'http:'));
  } catch {
    throw new DockerEngineError(`'${spec}' is not a valid Docker endpoint`);
  }
  if (scheme === 'ssh') {
    return { options: { protocol: 'ssh', host: url.hostname, port: url.port || 22, username: decodeURIComponent(url.username) || undefined, sshOptions: { agent: process.env.SSH_AUTH_SOCK } } as Docker.DockerOptions };
  }
  if (scheme === 'tcp' || scheme === 'http' || scheme === 'https') {
    const tls = scheme === 'https' || process.env.DOCKER_TLS_VERIFY === '1' || url.port === '2376';
    const options: Docker.DockerOptions = { protocol: tls ? 'https' : 'http', host: url.hostname, port: url.port || (tls ? 2376 : 2375) };
    const certDir = process.env.DOCKER_CERT_PATH;
    if (tls && certDir) {
      try {
        Object.assign(options, {
          ca: fs.readFileSync(path.join(certDir, 'ca.pem')),
          cert: fs.readFileSync(path.join(certDir, 'cert.pem')),
          key: fs.readFileSync(path.join(certDir, 'key.pem')),
        });
      } catch (err) {
        throw new DockerEngineError(`cannot read the TLS files in DOCKER_CERT_PATH (${certDir}): ${(err as Error).message}`);
      }
    }
    return { options };
  }
  throw new DockerEngineError(`'${spec}': unknown scheme ${scheme}:// (use unix://, tcp://, https:// or ssh://)`);
}

/** A person's words for why a connection failed. */
export function describeConnectError(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { statusCode?: number };
  switch (e?.code) {
    case 'ENOENT':
      return 'no such socket';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied (is this user allowed to use the engine, e.g. in the docker group?)';
    case 'ECONNREFUSED':
      return 'nothing answers there (is the engine running?)';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was cut';
    case 'ETIMEDOUT':
    case 'ABORT_ERR':
      return 'no answer in time';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
  }
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return 'no answer in time';
  return (e?.message ?? String(err)).trim();
}

/** Pings the engine; rejects with the cause when it does not answer within `timeoutMs`. */
export async function ping(docker: Docker, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const sig = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  // dockerode honours abortSignal here; its types do not list it.
  await docker.ping({ abortSignal: sig } as never);
}

/** Connects to the first engine that exists and answers; throws DockerEngineError listing what was tried. */
export async function connectEngine(dockerHost: string | undefined, signal?: AbortSignal): Promise<Engine> {
  const tried: string[] = [];
  for (const c of candidates(dockerHost)) {
    signal?.throwIfAborted();
    let docker: Docker;
    let socket: string | undefined;
    try {
      const parsed = modemOptions(c.spec);
      socket = parsed.socket;
      if (socket && !fs.existsSync(socket)) {
        tried.push(`${c.spec} (${c.from}): no such socket`);
        continue;
      }
      docker = new Docker(parsed.options);
    } catch (err) {
      tried.push(`${c.spec} (${c.from}): ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    try {
      await ping(docker, PING_TIMEOUT_MS, signal);
      return { docker, endpoint: socket && !c.spec.includes('://') ? `unix://${socket}` : c.spec };
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      tried.push(`${c.spec} (${c.from}): ${describeConnectError(err)}`);
    }
  }
  const hint = dockerHost ? 'Check docker_host in the environment\'s config.' : 'Start Docker (or Podman\'s socket), or set docker_host in the environment\'s config.';
  throw new DockerEngineError(`Cannot reach a Docker engine. Tried: ${tried.join('; ')}. ${hint}`);
}
