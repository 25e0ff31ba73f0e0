/**
 * `npm run serve -- [--port P] [--data DIR] [--host ADDR]`: the host without Electron. Serves
 * the Managed-Agents-compatible API, the renderer's API over WebSocket, and the UI.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadOrCreateApiKey } from './api/http/auth';
import { startServer } from './api/http/server';
import { resolveDataDir, resolveWorkRoot } from './data-dir';
import { createHost } from './host';

function usage(message?: string): never {
  if (message) console.error(`corral serve: ${message}`);
  console.error('usage: npm run serve -- [--port P] [--data DIR] [--host ADDR] [--work-root DIR] [--no-sandbox]');
  process.exit(2);
}

async function main(): Promise<void> {
  let values: { port?: string; data?: string; host?: string; 'work-root'?: string; 'no-sandbox'?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        data: { type: 'string' },
        host: { type: 'string' },
        'work-root': { type: 'string' },
        'no-sandbox': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  if (values.help) usage();
  const port = Number(values.port ?? process.env.CORRAL_PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--port must be 0-65535, got '${values.port}'`);
  const dataDir = resolveDataDir(values.data);
  const host = createHost({
    dataDir,
    brains: true,
    what: 'corral serve',
    workRoot: resolveWorkRoot(values['work-root'], dataDir),
    ...(values['no-sandbox'] ? { sandbox: false } : {}),
  });
  const { key, source } = loadOrCreateApiKey(dataDir);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const server = await startServer(host, {
    hostname: values.host ?? '127.0.0.1',
    port,
    apiKey: key,
    rendererDir: path.resolve(here, '..', 'out', 'renderer'),
  });
  if (values.host && !['127.0.0.1', 'localhost', '::1'].includes(values.host)) {
    console.warn(`corral serve: listening on ${values.host}: anyone who can reach it and has the key controls your agents`);
  }
  console.log(`corral serve: data in ${dataDir}`);
  console.log(`corral serve: API key ${source === 'env' ? 'from CORRAL_API_KEY' : `in ${path.join(dataDir, 'api-key')}`}`);
  console.log(`corral serve: API at ${server.url}/v1 (x-api-key or Authorization: Bearer)`);
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
  console.error('corral serve: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
