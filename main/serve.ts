/**
 * `npm run serve -- [--port P] [--data DIR] [--host ADDR]`: the host without Electron. Serves
 * the Managed-Agents-compatible API, the renderer's API over WebSocket, and the UI.
 *
 * Start-up order matters: the arguments and the data path are checked and the port is bound
 * before the host creates or locks anything, so a failed start leaves the data folder as it was.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadOrCreateApiKey } from './api/http/auth';
import { bindServer, type BoundServer } from './api/http/server';
import { modelEndpoint } from './cli/model-endpoint';
import { DEFAULT_PORT, serveHelp } from './cli/serve-help';
import { listenProblem } from './cli/start-errors';
import { dataDirProblem, resolveDataDir, resolveWorkRoot } from './data-dir';
import { createHost, type Host } from './host';
import { createLogger, levelFromEnv, logFileOf } from './logging/logger';
import { CORRAL_VERSION } from './version';

/** A start-up failure: one line on stderr, no stack, and this exit code. */
class StartError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

function parseFlags(): { port?: string; data?: string; host?: string; 'work-root'?: string; 'no-sandbox'?: boolean; help?: boolean; version?: boolean } {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        data: { type: 'string' },
        host: { type: 'string' },
        'work-root': { type: 'string' },
        'no-sandbox': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new StartError(`${(err as Error).message} (see --help)`, 2);
  }
}

async function main(): Promise<void> {
  const flags = parseFlags();
  if (flags.help) return void process.stdout.write(serveHelp());
  if (flags.version) return void console.log(CORRAL_VERSION);

  const portText = flags.port ?? (process.env.CORRAL_PORT || String(DEFAULT_PORT));
  const port = Number(portText);
  if (portText.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new StartError(`--port must be 0-65535, got '${portText}'`, 2);
  }
  if (flags.data === '') throw new StartError('--data is empty: give it a folder, e.g. --data ~/corral-data', 2);
  const hostname = flags.host || '127.0.0.1';
  const dataDir = resolveDataDir(flags.data);
  const problem = dataDirProblem(dataDir);
  if (problem) throw new StartError(problem, 2);

  // Bind first: a port in use must not leave a created or locked data folder behind.
  let server: BoundServer;
  try {
    server = await bindServer({ hostname, port });
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
  const { key, source } = loadOrCreateApiKey(dataDir);
  const here = path.dirname(fileURLToPath(import.meta.url));
  server.serve(host, { apiKey: key, rendererDir: path.resolve(here, '..', 'out', 'renderer') });

  if (flags.host && !['127.0.0.1', 'localhost', '::1'].includes(flags.host)) {
    console.warn(`corral serve: listening on ${flags.host}: anyone who can reach it and has the key controls your agents`);
  }
  const model = modelEndpoint();
  console.log(`corral serve: Corral ${CORRAL_VERSION}, data in ${dataDir}, log in ${logFileOf(dataDir)}`);
  const modelKey = await host.vault.defaultModelKeySource();
  console.log(`corral serve: model at ${model.url} (${model.urlSource === 'default' ? 'default; set ANTHROPIC_BASE_URL to change' : 'from ANTHROPIC_BASE_URL'})`);
  if (model.problem) console.warn(`corral serve: warning: ${model.problem}; model requests will fail`);
  if (modelKey.startsWith('none')) console.warn("corral serve: warning: no model API key: set ANTHROPIC_API_KEY or add a model_api_key credential to the default vault, or sessions without one in their vaults stop with an error at their first model request");
  logger.info({ model_url: model.url, model_url_source: model.urlSource, model_key_source: modelKey, api_key_source: source }, 'serving');
  console.log(`corral serve: API key ${source === 'env' ? 'from CORRAL_API_KEY' : `in ${path.join(dataDir, 'api-key')}`}`);
  // Where secrets come from, never what they are.
  console.log(`corral serve: vault sealed with ${host.vault.keySource?.description}`);
  console.log(`corral serve: model key: ${modelKey}; a session whose vaults hold a model_api_key uses its own`);
  console.log(`corral serve: API at ${server.url}/v1 (x-api-key or Authorization: Bearer); health at ${server.url}/health`);
  // The link carries the key once; the page trades it for a cookie and drops it from the URL.
  console.log(`corral serve: open ${server.url}/?token=${encodeURIComponent(key)}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`corral serve: ${signal}, stopping`);
    server
      .close()
      .finally(() => host.close())
      .finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  if (err instanceof StartError) {
    console.error(`corral serve: ${err.message}`);
    process.exit(err.exitCode);
  }
  console.error('corral serve: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
