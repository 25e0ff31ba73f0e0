/**
 * The environments of the processes the host starts, built from allowlists rather than as
 * filtered copies of its own: a variable the host happens to hold (a database URL, a token in
 * a name no pattern foresaw) never reaches a command or a brain unless it is named here or by
 * the user's environment config.
 */

import { envEntryProblem } from './env-vars';

export { envEntryProblem, ENV_VAR_NAME } from './env-vars';

/** What every command on a hand gets from the host, when the host has it. */
export const COMMAND_ENV_NAMES = ['PATH', 'HOME', 'USER', 'LANG', 'TERM', 'SHELL', 'TMPDIR'] as const;

/**
 * The environment of a command on a hand of this machine: the allowlisted variables from the
 * host's environment, then what the environment config sets (`env`), which wins.
 */
export function commandEnv(configured: Record<string, string> | undefined = undefined, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of COMMAND_ENV_NAMES) {
    const value = from[name];
    if (value !== undefined) out[name] = value;
  }
  for (const [name, value] of Object.entries(configured ?? {})) {
    if (envEntryProblem(name, value) === undefined) out[name] = value;
  }
  return out;
}

/**
 * What the host's own git needs when it clones a repository resource: the command allowlist,
 * plus the user's network and SSH-agent settings (a proxy, an agent socket for ssh URLs).
 * Never the host's whole environment: git runs helpers (credential, ssh, askpass) that inherit it.
 */
const HOST_GIT_ENV_NAMES = ['SSH_AUTH_SOCK', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'LC_ALL', 'SystemRoot', 'TEMP', 'TMP', 'USERPROFILE'] as const;

export function hostGitEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out = commandEnv(undefined, from);
  for (const name of HOST_GIT_ENV_NAMES) {
    const value = from[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * What a brain process gets: enough to run Node (and Electron as Node) and the knobs it reads.
 * Nothing else: not the API server's key, not the model's key (the vault gives a brain a
 * capability for the host's model proxy instead, vault/brain-env.ts), not whatever else the
 * user's shell exported.
 */
const BRAIN_ENV_NAMES = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR',
  'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'NODE_V8_COVERAGE',
  'ELECTRON_RUN_AS_NODE',
  'CORRAL_MODEL_RETRIES', 'CORRAL_RETRY_BASE_MS', 'CORRAL_RETRY_MAX_MS', 'CORRAL_BRAIN_LINGER_MS',
  // Not a secret; the vault's model proxy replaces it with its own address for brains it serves.
  'ANTHROPIC_BASE_URL',
  // Windows cannot start a process (or open a socket) without these.
  'SystemRoot', 'SYSTEMROOT', 'windir', 'ComSpec', 'PATHEXT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA',
] as const;

/** tsx (running the brain from source) reads its own TSX_* settings. */
const BRAIN_ENV_PREFIXES = ['TSX_'] as const;

export function brainEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const name of BRAIN_ENV_NAMES) if (from[name] !== undefined) out[name] = from[name];
  for (const [name, value] of Object.entries(from)) {
    if (value !== undefined && BRAIN_ENV_PREFIXES.some((p) => name.startsWith(p))) out[name] = value;
  }
  return out;
}
