/**
 * `npm run serve -- [--port P] [--data DIR] [--host ADDR]`: the host without Electron. Serves
 * the Managed-Agents-compatible API, the renderer's API over WebSocket, and the UI.
 * `npm run serve -- link` prints a new one-time link of the running serve; `rotate-key`
 * replaces the API key (main/cli/serve-commands.ts).
 *
 * This entry stays light: it reads the flags and takes the keys out of the environment (on Linux
 * by starting again without them, cli/clean-env.ts) before it loads the host (serve-host.ts).
 */
import { parseArgs } from 'node:util';
import { takeHostSecrets } from './cli/clean-env';
import { serveHelp } from './cli/serve-help';
import { StartError } from './cli/start-errors';
import { resolveDataDir } from './data-dir';
// A type only: erased, so the launching process still loads none of the host.
import type { ServeFlags } from './serve-host';
import { CORRAL_VERSION } from './version';

const COMMANDS = ['link', 'rotate-key'] as const;

function parseFlags(): ServeFlags & { help?: boolean; version?: boolean; command?: (typeof COMMANDS)[number] } {
  try {
    const { values, positionals } = parseArgs({
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        data: { type: 'string' },
        host: { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'work-root': { type: 'string' },
        'no-sandbox': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
    });
    if (positionals.length > 1 || (positionals[0] && !(COMMANDS as readonly string[]).includes(positionals[0]))) {
      throw new Error(`unknown command '${positionals.join(' ')}': the commands are ${COMMANDS.join(', ')}`);
    }
    return { ...values, command: positionals[0] as (typeof COMMANDS)[number] | undefined };
  } catch (err) {
    throw new StartError(`${(err as Error).message} (see --help)`, 2);
  }
}

async function main(): Promise<void> {
  const flags = parseFlags();
  if (flags.help) return void process.stdout.write(serveHelp());
  if (flags.version) return void console.log(CORRAL_VERSION);
  if (flags.command) {
    const { CommandError, linkCommand, rotateKeyCommand } = await import('./cli/serve-commands');
    const dir = resolveDataDir(flags.data);
    try {
      return await (flags.command === 'link' ? linkCommand(dir) : rotateKeyCommand(dir));
    } catch (err) {
      if (err instanceof CommandError) throw new StartError(err.message);
      throw err;
    }
  }
  // The keys leave the environment before anything else runs (on Linux by starting again
  // without them: /proc/PID/environ keeps the initial environment).
  const secrets = await takeHostSecrets();
  const { serveHost } = await import('./serve-host');
  await serveHost(flags, secrets);
}

main().catch((err) => {
  if (err instanceof StartError) {
    console.error(`corral serve: ${err.message}`);
    process.exit(err.exitCode);
  }
  console.error('corral serve: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
