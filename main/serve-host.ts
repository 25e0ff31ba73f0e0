/**
 * The serving half of `npm run serve` (serve.ts is the entry): checks the settings, binds the
 * port, creates the host and serves the API, the UI's WebSocket and the UI. serve.ts imports it
 * only once the keys are out of the environment, so a launching process that starts the serving
 * one again without them (cli/clean-env.ts) never loads the host's modules: a start pays for
 * them once, not twice.
 *
 * Start-up order matters: the arguments and the data path are checked and the port is bound
 * before the host creates or locks anything, so a failed start leaves the data folder as it was.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiKeyProblem, loadOrCreateApiKey, API_KEY_FILE } from './api/http/auth';
import { isLoopback, parseAllowedHosts } from './api/http/allowed-hosts';
import { ServerAuth } from './api/http/ui-auth';
import type { HostSecrets } from './cli/clean-env';
import { removeServeState, writeServeState } from './cli/serve-state';
import { bindServer, type BoundServer } from './api/http/server';
import { modelEndpoint } from './cli/model-endpoint';
import { DEFAULT_PORT } from './cli/serve-help';
import { listenProblem, StartError } from './cli/start-errors';
import { dataDirProblem, resolveDataDir, resolveWorkRoot } from './data-dir';
import { createHost, type Host } from './host';
import { createLogger, levelFromEnv, logFileOf } from './logging/logger';
import { CORRAL_VERSION } from './version';

/** The flags serve.ts parsed that the serving half reads. */
export interface ServeFlags {
  port?: string;
  data?: string;
  host?: string;
  'allowed-hosts'?: string;
  'work-root'?: string;
  'no-sandbox'?: boolean;
}

/**
 * The renderer's build (out/renderer): beside the bundle `npm run serve` runs (out/main), or
 * under the project from the source (main/, as the tests start serve).
 */
function rendererDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return import.meta.url.endsWith('.ts') ? path.resolve(here, '..', 'out', 'renderer') : path.resolve(here, '..', 'renderer');
}

/** Serves until SIGINT or SIGTERM; a failed start throws (StartError: one line, its exit code). */
export async function serveHost(flags: ServeFlags, secrets: HostSecrets): Promise<void> {
  if (secrets.CORRAL_API_KEY !== undefined) {
    const short = apiKeyProblem(secrets.CORRAL_API_KEY);
    if (short) throw new StartError(`CORRAL_API_KEY ${short}`, 2);
  }

  const portText = flags.port ?? (process.env.CORRAL_PORT || String(DEFAULT_PORT));
  const port = Number(portText);
  if (portText.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new StartError(`--port must be 0-65535, got '${portText}'`, 2);
  }
  if (flags.data === '') throw new StartError('--data is empty: give it a folder, e.g. --data ~/corral-data', 2);
  const hostname = flags.host || '127.0.0.1';
  const allowed = parseAllowedHosts(flags['allowed-hosts'] ?? process.env.CORRAL_ALLOWED_HOSTS);
  if (allowed && 'problem' in allowed) throw new StartError(allowed.problem, 2);
  if (!isLoopback(hostname) && !allowed) {
    throw new StartError(`--host ${hostname} is reachable beyond this machine: name the host names clients will use with --allowed-hosts (e.g. --allowed-hosts myhost.lan:${port === 0 ? DEFAULT_PORT : port}), which the server then requires in the Host header`, 2);
  }
  const dataDir = resolveDataDir(flags.data);
  const problem = dataDirProblem(dataDir);
  if (problem) throw new StartError(problem, 2);

  // Bind first: a port in use must not leave a created or locked data folder behind.
  let server: BoundServer;
  try {
    server = await bindServer({ hostname, port, allowedHosts: allowed?.names });
  } catch (err) {
    throw new StartError(listenProblem(err, hostname, port) ?? `cannot listen on ${hostname}:${port}: ${(err as Error).message}`);
  }
  let host: Host;
  const logger = createLogger({ dataDir, stderr: true, level: levelFromEnv(process.env.CORRAL_LOG_LEVEL), format: process.env.CORRAL_LOG_FORMAT === 'json' ? 'json' : 'text' });
  try {
    host = createHost({
      dataDir,
      brains: true,
      what: 'corral serve',
      logger,
      workRoot: resolveWorkRoot(flags['work-root'], dataDir),
      ...(flags['no-sandbox'] ? { sandbox: false } : {}),
      vault: {
        passphrase: secrets.CORRAL_VAULT_PASSPHRASE,
        // The model-key fallback, from memory: no longer in any environment.
        env: { ...process.env, ANTHROPIC_API_KEY: secrets.ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN: secrets.ANTHROPIC_AUTH_TOKEN },
        // The API's own port is never a destination of the hands' egress proxy, whatever a credential names.
        egress: { ownPorts: [server.port] },
      },
    });
  } catch (err) {
    await server.close();
    throw new StartError((err as Error).message);
  }
  try {
    await host.vault.ready;
  } catch (err) {
    await host.close();
    await server.close();
    throw err;
  }
  // Brains start once the sandbox check and the model proxy are done (host.started): input that
  // arrives before then is not followed (a confirmation sent at once to a session waiting for the
  // user woke nothing), so nothing is announced before.
  await host.started;
  const { key, source } = loadOrCreateApiKey(dataDir, { CORRAL_API_KEY: secrets.CORRAL_API_KEY });
  const keyProblem = apiKeyProblem(key);
  if (keyProblem) {
    await host.close();
    await server.close();
    throw new StartError(`the key in ${path.join(dataDir, API_KEY_FILE)} ${keyProblem} (npm run serve -- rotate-key makes a new one)`, 2);
  }
  const keyFile = path.join(dataDir, API_KEY_FILE);
  const auth = new ServerAuth({ key, keyFile });
  server.serve(host, { apiKey: key, auth, keyFile, rendererDir: rendererDir() });
  writeServeState(dataDir, { url: server.url, pid: process.pid });
  // Before anything is printed: a SIGTERM sent as soon as the link appears must stop serve
  // cleanly, not meet the default action (the likely cause of one exit 143 seen under load).
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`corral serve: ${signal}, stopping`);
    removeServeState(dataDir);
    server
      .close()
      .finally(() => host.close())
      .finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  if (!isLoopback(hostname)) {
    console.warn(`corral serve: listening on ${hostname} for ${allowed!.names.join(', ')}: anyone who can reach it and has the key controls your agents (plain http: use a TLS proxy beyond a trusted network)`);
  }
  const model = modelEndpoint();
  console.log(`corral serve: Corral ${CORRAL_VERSION}, data in ${dataDir}, log in ${logFileOf(dataDir)}`);
  const modelKey = await host.vault.defaultModelKeySource();
  console.log(`corral serve: model at ${model.url} (${model.urlSource === 'default' ? 'default; set ANTHROPIC_BASE_URL to change' : 'from ANTHROPIC_BASE_URL'})`);
  if (model.problem) console.warn(`corral serve: warning: ${model.problem}; model requests will fail`);
  if (modelKey.startsWith('none')) console.warn("corral serve: warning: no model API key: set ANTHROPIC_API_KEY or add a model_api_key credential to the default vault, or sessions without one in their vaults stop with an error at their first model request");
  logger.info({ model_url: model.url, model_url_source: model.urlSource, model_key_source: modelKey, api_key_source: source }, 'serving');
  console.log(`corral serve: API key ${source === 'env' ? 'from CORRAL_API_KEY' : `in ${keyFile}`} (npm run serve -- rotate-key replaces it)`);
  // Where secrets come from, never what they are.
  console.log(`corral serve: vault sealed with ${host.vault.keySource?.description}`);
  console.log(`corral serve: model key: ${modelKey}; a session whose vaults hold a model_api_key uses its own`);
  console.log(`corral serve: API at ${server.url}/v1 (x-api-key or Authorization: Bearer); health at ${server.url}/health`);
  // The link carries a one-time code, never the key; the page trades it for a session cookie.
  const { code, expiresAt } = auth.mintCode();
  console.log(`corral serve: open ${server.url}/?code=${code} (works once, for ${Math.round((expiresAt.getTime() - Date.now()) / 60_000)} minutes; npm run serve -- link prints a new one)`);
}
