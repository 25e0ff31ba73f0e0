/**
 * Keeps the host's secrets out of every environment a process can read. Linux shows a
 * process's *initial* environment to any process of the same user in /proc/PID/environ, and
 * deleting from `process.env` does not change it; so when `serve` starts with a secret in its
 * environment it starts itself again (the serving process) with those variables removed and
 * hands their values over on a pipe (fd 3) — never argv, never the environment. The first
 * process only waits, forwarding signals and the exit code.
 *
 * Elsewhere (macOS, Windows: no readable initial environment) the secrets are simply taken out
 * of `process.env` so that no child inherits them.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { scrubInitialEnviron } from './scrub-environ';

/** The variables that hold secrets; read once at start, then gone from the environment. */
export const SECRET_ENV_NAMES = ['CORRAL_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CORRAL_VAULT_PASSPHRASE'] as const;
export type HostSecrets = Partial<Record<(typeof SECRET_ENV_NAMES)[number], string>>;

/** Set in the serving process's environment: the fd its secrets arrive on. Not a secret. */
const SECRETS_FD_ENV = 'CORRAL_SECRETS_FD';
const SECRETS_FD = 3;

/**
 * In the first process, when it holds secrets on Linux: starts the serving process, passes the
 * secrets, and never resolves (the process exits with the serving one). Otherwise: the secrets,
 * from the pipe (in the serving process) or from `process.env`, which no longer holds them.
 */
export async function takeHostSecrets(env: NodeJS.ProcessEnv = process.env, platform = process.platform): Promise<HostSecrets> {
  if (env[SECRETS_FD_ENV] === String(SECRETS_FD)) {
    delete env[SECRETS_FD_ENV];
    return readSecrets(SECRETS_FD);
  }
  const secrets: HostSecrets = {};
  for (const name of SECRET_ENV_NAMES) {
    if (env[name]) secrets[name] = env[name];
    delete env[name];
  }
  if (platform !== 'linux' || Object.keys(secrets).length === 0) return secrets;
  return reexec(env, secrets);
}

function reexec(env: NodeJS.ProcessEnv, secrets: HostSecrets): Promise<never> {
  // `env` has no secret left in it (deleted above).
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...env, [SECRETS_FD_ENV]: String(SECRETS_FD) },
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
  });
  const pipe = child.stdio[SECRETS_FD] as NodeJS.WritableStream;
  pipe.on('error', () => {}); // the child died first: its exit says so
  // One line, and the pipe stays open: its end tells the serving process this one is gone
  // (killed with SIGKILL, which cannot be passed on), and it stops too.
  pipe.write(`${JSON.stringify(secrets)}\n`);
  // This process lives on (signals, exit code): its own /proc/PID/environ must not keep the keys.
  const scrub = scrubInitialEnviron(SECRET_ENV_NAMES);
  if ('problem' in scrub) console.warn(`corral serve: warning: the keys could not be blanked in the launching process's /proc/${process.pid}/environ (${scrub.problem}); it stays readable by this user's processes until serve stops`);
  // A terminal's Ctrl-C reaches both (same process group); a kill aimed at this process is passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
  }
  return new Promise<never>(() => {
    // The serving process's exit code; killed by a signal, the shell's convention (128 + its number).
    child.once('exit', (code, signal) => process.exit(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 1)));
    child.once('error', (err) => {
      console.error(`corral serve: cannot start the serving process: ${err.message}`);
      process.exit(1);
    });
  });
}

/**
 * Reads the secrets line from the pipe on `fd`. A net.Socket, not fs.createReadStream: a file
 * stream reads a pipe with blocking read() calls on a thread-pool thread, which then stays parked
 * in read() for the life of the process, and process.exit waits for the thread pool on its way out,
 * so the serving process never finished exiting after SIGTERM. A socket reads the pipe through the
 * event loop (epoll), and once the secrets are in it is unref'ed: it keeps nothing alive.
 */
function readSecrets(fd: number): Promise<HostSecrets> {
  return new Promise((resolve, reject) => {
    const pipe = new net.Socket({ fd, readable: true, writable: false });
    let text = '';
    let done = false;
    pipe.on('data', (chunk: Buffer) => {
      if (done) return;
      text += chunk.toString('utf8');
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      done = true;
      // From here on the pipe only watches for the launcher's end: it must not keep serve alive.
      pipe.unref();
      try {
        resolve(parseSecrets(text.slice(0, nl)));
      } catch (err) {
        reject(err as Error);
      }
      text = '';
    });
    pipe.on('error', (err) => {
      if (!done) reject(err);
    });
    pipe.on('end', () => {
      if (!done) return reject(new Error('the secrets pipe closed before the secrets came'));
      // The launching process is gone (killed with SIGKILL, which it cannot pass on): stop as if told to.
      process.kill(process.pid, 'SIGTERM');
    });
  });
}

function parseSecrets(line: string): HostSecrets {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  const out: HostSecrets = {};
  for (const name of SECRET_ENV_NAMES) if (typeof parsed[name] === 'string') out[name] = parsed[name];
  return out;
}
