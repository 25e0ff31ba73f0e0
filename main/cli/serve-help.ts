import { defaultDataDir } from '../data-dir';

/** One setting `serve` reads: a flag, an environment variable, or both. */
export interface ServeSetting {
  flag?: string;
  env?: string;
  /** The default, as the help shows it. */
  default: string;
  what: string;
}

/** The default port of `serve`. */
export const DEFAULT_PORT = 8787;

/**
 * Every flag and environment variable the headless server (and the brains and hands it runs)
 * reads. A test checks that each `process.env.X` in main/ is listed here.
 */
export function serveSettings(): ServeSetting[] {
  return [
    { flag: '--port P', env: 'CORRAL_PORT', default: String(DEFAULT_PORT), what: 'port to listen on (0 picks a free one)' },
    { flag: '--data DIR', env: 'CORRAL_DATA', default: defaultDataDir(), what: 'data folder: database, API key, logs, work folders' },
    { flag: '--work-root DIR', env: 'CORRAL_WORK_ROOT', default: '~/Corral/work (or DATA-work beside a --data folder)', what: "sessions' work folders on this machine (kept outside the data folder)" },
    { flag: '--no-sandbox', env: 'CORRAL_SANDBOX', default: 'on', what: 'the flag, or off: run local commands without the sandbox, on purpose (hands say so)' },
    { flag: '--host ADDR', default: '127.0.0.1', what: 'address to listen on; any other than loopback is reachable from the network and needs --allowed-hosts' },
    { flag: '--allowed-hosts LIST', env: 'CORRAL_ALLOWED_HOSTS', default: 'none (loopback names only)', what: 'host names (name or name:port, comma-separated) clients use; required with a non-loopback --host, checked in the Host header' },
    { env: 'CORRAL_API_KEY', default: 'made at first start, kept in DATA/api-key', what: 'the key clients send as x-api-key or Authorization: Bearer (32 characters at least; taken out of the environment at start)' },
    { env: 'ANTHROPIC_API_KEY', default: 'none (sessions then stop with an error)', what: "the model API key, when neither a session's vaults nor the default vault hold a model_api_key (a first-run fallback; brains never see it)" },
    { env: 'ANTHROPIC_AUTH_TOKEN', default: 'unset', what: 'like ANTHROPIC_API_KEY, sent as a bearer token' },
    { env: 'CORRAL_VAULT_PASSPHRASE', default: 'unset: the key file DATA/vault.key (0600)', what: "seals the vault with this passphrase (scrypt) instead; taken out of the host's environment once read" },
    { env: 'ANTHROPIC_BASE_URL', default: 'https://api.anthropic.com', what: 'the Messages API endpoint' },
    { env: 'CORRAL_MODEL_RETRIES', default: '4', what: 'retries of a model request after 429, 529, 5xx or a dropped stream' },
    { env: 'CORRAL_RETRY_BASE_MS', default: '2000', what: 'first retry delay (doubles each time)' },
    { env: 'CORRAL_RETRY_MAX_MS', default: '60000', what: 'longest retry delay' },
    { env: 'CORRAL_BRAIN_POOL', default: '2', what: "brain processes started ahead and bound to a new session when it needs one (0: fork each brain on demand)" },
    { env: 'CORRAL_HAND_POOL', default: 'unset (no pool)', what: "hands made ahead per environment, ENV=SIZE,… (an environment's id or name; ssh and docker): a session's first tool call finds its hand connected, the last session's public repositories already cloned" },
    { env: 'CORRAL_BRAIN_LINGER_MS', default: '30000', what: 'how long an idle brain process waits for the next message' },
    { env: 'CORRAL_WORK_LEASE_TTL_S', default: '60', what: "a self-hosted worker's lease: a worker silent this long loses its work (its call in flight fails)" },
    { env: 'CORRAL_WORK_CLAIM_TIMEOUT_MS', default: '600000', what: 'how long a call on a self_hosted hand waits for a worker to claim it' },
    { env: 'CORRAL_LOG_LEVEL', default: 'info', what: 'lowest level logged: fatal, error, warn, info, debug, trace, silent' },
    { env: 'CORRAL_LOG_FORMAT', default: 'text', what: "stderr log format: text or json (DATA/logs/corral.log is always JSON)" },
    { env: 'DOCKER_HOST', default: 'the usual Docker and Podman sockets', what: 'Docker Engine API for docker hands without docker_host' },
    { env: 'DOCKER_TLS_VERIFY', default: 'unset', what: '1: use TLS with a tcp:// DOCKER_HOST' },
    { env: 'DOCKER_CERT_PATH', default: 'unset', what: 'folder of ca.pem, cert.pem, key.pem for DOCKER_TLS_VERIFY' },
    { env: 'XDG_RUNTIME_DIR', default: 'unset', what: "where a rootless Podman's socket is looked for" },
    { env: 'SSH_AUTH_SOCK', default: 'unset', what: 'ssh-agent for ssh hands (and docker over ssh://)' },
    { env: 'ANDROID_ADB_SERVER_PORT', default: '5037', what: 'adb server port for adb hands without adb_port' },
    { env: 'PATH', default: 'inherited', what: "where the sandbox's bwrap, socat and rg are found; passed on to commands (with HOME, USER, LANG, TERM, SHELL, TMPDIR)" },
    { env: 'XDG_CONFIG_HOME', default: '~/.config', what: 'parent of the default data folder on Linux' },
  ];
}

/** The text of `serve --help`. */
export function serveHelp(): string {
  const settings = serveSettings();
  const flags = settings.filter((s) => s.flag);
  const envs = settings.filter((s) => s.env);
  const width = (xs: string[]) => Math.max(...xs.map((x) => x.length)) + 2;
  const fw = width([...flags.map((s) => s.flag!), '-v, --version']);
  const ew = width(envs.map((s) => s.env!));
  return [
    'usage: npm run serve -- [--port P] [--data DIR] [--host ADDR --allowed-hosts LIST]',
    '       npm run serve -- link [--data DIR]        a new one-time link for the window (serve running)',
    '       npm run serve -- rotate-key [--data DIR]  a new API key in DATA/api-key (serve running or not)',
    '',
    "Runs Corral without the desktop app: the Managed-Agents-compatible API under /v1, the UI's",
    'WebSocket and the UI itself, and GET /health (no key). Logs go to stderr and to',
    'DATA/logs/corral.log (rotated at 10 MiB, 3 old files kept).',
    '',
    'Flags (a flag wins over its environment variable):',
    ...flags.map((s) => `  ${s.flag!.padEnd(fw)}${s.what} [default: ${s.default}${s.env ? `; or ${s.env}` : ''}]`),
    `  ${'-h, --help'.padEnd(fw)}this text`,
    `  ${'-v, --version'.padEnd(fw)}the version`,
    '',
    'Environment:',
    ...envs.map((s) => `  ${s.env!.padEnd(ew)}${s.what} [default: ${s.default}]`),
    '',
  ].join('\n');
}
