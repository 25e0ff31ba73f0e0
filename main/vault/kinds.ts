/**
 * Credential kinds: what of each is public (shown by the API: name, kind, scope) and what is
 * secret (sealed in the database, never shown), how an update changes them, which values
 * redaction looks for, and which uses (purposes) a credential may serve.
 *
 * The API's kinds follow the SDK's shapes exactly (`static_bearer`, `mcp_oauth`,
 * `environment_variable`); Corral adds `ssh_private_key`, `git_token` and `model_api_key`.
 */
import crypto from 'node:crypto';
import * as ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { checkHosts, CredentialInputError, normalizeRepositoryUrl, normalizeServerUrl } from './scope';

export {
  allows,
  checkHosts,
  CredentialInputError,
  hostMatches,
  KINDS_FOR,
  normalizeRepositoryUrl,
  normalizeServerUrl,
  uniqueKeyOf,
  type CredentialPurpose,
} from './scope';

// ssh2 is CommonJS; Node's ESM loader exposes only some of its names (not `utils`).
const sshUtils: typeof ssh2.utils = ssh2.utils ?? (ssh2 as unknown as { default: typeof ssh2 }).default.utils;

export const CREDENTIAL_KINDS = ['static_bearer', 'mcp_oauth', 'environment_variable', 'ssh_private_key', 'git_token', 'model_api_key', 'environment_key'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export type Networking = { type: 'unrestricted' } | { type: 'limited'; allowed_hosts: string[] };
type TokenEndpointAuth = { type: 'none' } | { type: 'client_secret_basic' | 'client_secret_post'; client_secret: string };

/** What a client sends to create a credential (`auth`), already shape-checked by the API. */
export type AuthCreate =
  | { type: 'static_bearer'; mcp_server_url: string; token: string }
  | {
      type: 'mcp_oauth';
      mcp_server_url: string;
      access_token: string;
      expires_at?: string | null;
      refresh?: {
        client_id: string;
        refresh_token: string;
        token_endpoint: string;
        token_endpoint_auth: TokenEndpointAuth;
        resource?: string | null;
        scope?: string | null;
      } | null;
    }
  | {
      type: 'environment_variable';
      secret_name: string;
      secret_value: string;
      networking: Networking;
      injection_location?: { body?: boolean; header?: boolean };
    }
  | { type: 'ssh_private_key'; private_key: string; passphrase?: string | null; hosts?: string[] }
  | { type: 'git_token'; token: string; username?: string | null; repository_urls?: string[]; hosts?: string[] }
  | { type: 'model_api_key'; api_key: string; header?: 'x-api-key' | 'authorization' }
  // Made by the host only (a self_hosted environment's key, environment-keys.ts); the API's schema has no such kind.
  | { type: 'environment_key'; environment_id: string; key_id: string; key: string };

/** What a client sends to change a credential's `auth`; the type cannot change. */
export type AuthUpdate =
  | { type: 'static_bearer'; token?: string | null }
  | {
      type: 'mcp_oauth';
      access_token?: string | null;
      expires_at?: string | null;
      refresh?: {
        refresh_token?: string | null;
        scope?: string | null;
        token_endpoint_auth?: { type: 'client_secret_basic' | 'client_secret_post'; client_secret?: string | null };
      } | null;
    }
  | { type: 'environment_variable'; secret_value?: string | null; networking?: Networking | null; injection_location?: { body?: boolean; header?: boolean } }
  | { type: 'ssh_private_key'; private_key?: string | null; passphrase?: string | null; hosts?: string[] | null }
  | { type: 'git_token'; token?: string | null; username?: string | null; repository_urls?: string[] | null; hosts?: string[] | null }
  | { type: 'model_api_key'; api_key?: string | null; header?: 'x-api-key' | 'authorization' | null }
  | { type: 'environment_key' };

/** The public part of each kind: exactly what `auth` shows in API responses. */
export type PublicAuth = Record<string, unknown> & { type: CredentialKind };

/** The sealed part of each kind. */
export type SecretOf<K extends CredentialKind> = {
  static_bearer: { token: string };
  mcp_oauth: { access_token: string; refresh_token?: string; client_secret?: string };
  environment_variable: { secret_value: string };
  ssh_private_key: { private_key: string; passphrase?: string };
  git_token: { token: string };
  model_api_key: { api_key: string };
  environment_key: { key: string };
}[K];
export type AnySecret = SecretOf<CredentialKind>;

/** Tokens, keys and values shorter than this are refused: they could not be redacted reliably. */
export const MIN_SECRET_CHARS = 8;

function needSecret(value: string, field: string): string {
  if (value.length < MIN_SECRET_CHARS) {
    throw new CredentialInputError(`auth.${field} is shorter than ${MIN_SECRET_CHARS} characters; Corral refuses it, as it could not be told apart from ordinary text to redact it`);
  }
  return value;
}


function futureTime(raw: string | null | undefined, field: string): string | null {
  if (raw == null) return null;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw new CredentialInputError(`${field} must be an RFC 3339 timestamp, got '${raw}'`);
  if (t <= Date.now()) throw new CredentialInputError(`${field} must be in the future`);
  return new Date(t).toISOString();
}

/** Reads an SSH private key (with its passphrase): its public half, for the API to show. */
function readSshKey(privateKey: string, passphrase: string | undefined): { key_type: string; public_key: string; fingerprint: string } {
  const parsed = sshUtils.parseKey(privateKey, passphrase);
  if (parsed instanceof Error) {
    if (/passphrase|decrypt|bad decrypt/i.test(parsed.message)) {
      throw new CredentialInputError(passphrase ? 'auth.passphrase does not open auth.private_key' : 'auth.private_key is protected by a passphrase: send auth.passphrase too');
    }
    throw new CredentialInputError(`auth.private_key is not a private key Corral can read (${parsed.message})`);
  }
  const key: ParsedKey = Array.isArray(parsed) ? (parsed[0] as ParsedKey) : parsed;
  if (!key.isPrivateKey()) throw new CredentialInputError('auth.private_key is a public key; send the private key');
  const pub = key.getPublicSSH();
  return {
    key_type: key.type,
    public_key: `${key.type} ${pub.toString('base64')}`,
    fingerprint: `SHA256:${crypto.createHash('sha256').update(pub).digest('base64').replace(/=+$/, '')}`,
  };
}

/** Splits a new credential's `auth` into its public record and its secret. */
export function splitCreate(auth: AuthCreate): { auth: PublicAuth; secret: AnySecret } {
  switch (auth.type) {
    case 'static_bearer':
      return { auth: { type: 'static_bearer', mcp_server_url: normalizeServerUrl(auth.mcp_server_url) }, secret: { token: needSecret(auth.token, 'token') } };
    case 'mcp_oauth': {
      const r = auth.refresh ?? null;
      const secret: SecretOf<'mcp_oauth'> = { access_token: needSecret(auth.access_token, 'access_token') };
      if (r) {
        secret.refresh_token = needSecret(r.refresh_token, 'refresh.refresh_token');
        if (r.token_endpoint_auth.type !== 'none') secret.client_secret = needSecret(r.token_endpoint_auth.client_secret, 'refresh.token_endpoint_auth.client_secret');
      }
      return {
        auth: {
          type: 'mcp_oauth',
          mcp_server_url: normalizeServerUrl(auth.mcp_server_url),
          expires_at: futureTime(auth.expires_at, 'auth.expires_at'),
          refresh: r
            ? {
                client_id: r.client_id,
                token_endpoint: checkHttpUrl(r.token_endpoint, 'auth.refresh.token_endpoint'),
                token_endpoint_auth: { type: r.token_endpoint_auth.type },
                resource: r.resource ?? null,
                scope: r.scope ?? null,
              }
            : null,
        },
        secret,
      };
    }
    case 'environment_variable': {
      const inj = { body: auth.injection_location?.body ?? false, header: auth.injection_location?.header ?? true };
      if (!inj.body && !inj.header) throw new CredentialInputError('auth.injection_location: at least one of body and header must be enabled');
      return {
        auth: { type: 'environment_variable', secret_name: auth.secret_name, networking: checkNetworking(auth.networking), injection_location: inj },
        secret: { secret_value: needSecret(auth.secret_value, 'secret_value') },
      };
    }
    case 'ssh_private_key': {
      const passphrase = auth.passphrase ?? undefined;
      return {
        auth: { type: 'ssh_private_key', hosts: checkHosts(auth.hosts ?? [], 'auth.hosts'), ...readSshKey(auth.private_key, passphrase) },
        secret: { private_key: auth.private_key, ...(passphrase ? { passphrase } : {}) },
      };
    }
    case 'git_token': {
      const scope = gitScope(auth.repository_urls ?? [], auth.hosts ?? []);
      return { auth: { type: 'git_token', username: auth.username ?? 'x-access-token', ...scope }, secret: { token: needSecret(auth.token, 'token') } };
    }
    case 'model_api_key':
      return { auth: { type: 'model_api_key', header: auth.header ?? 'x-api-key' }, secret: { api_key: needSecret(auth.api_key, 'api_key') } };
    case 'environment_key':
      return { auth: { type: 'environment_key', environment_id: auth.environment_id, key_id: auth.key_id }, secret: { key: needSecret(auth.key, 'key') } };
  }
}

function checkHttpUrl(raw: string, field: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.href;
  } catch {
    // fall through
  }
  throw new CredentialInputError(`${field} must be an http(s) URL, got '${raw}'`);
}

function checkNetworking(n: Networking): Networking {
  if (n.type === 'unrestricted') return { type: 'unrestricted' };
  if (n.allowed_hosts.length === 0) throw new CredentialInputError('auth.networking.allowed_hosts needs at least one host (or use networking type unrestricted)');
  return { type: 'limited', allowed_hosts: checkHosts(n.allowed_hosts, 'auth.networking.allowed_hosts') };
}

function gitScope(urls: readonly string[], hosts: readonly string[]): { repository_urls: string[]; hosts: string[] } {
  const repository_urls = [...new Set(urls.map(normalizeRepositoryUrl))];
  const h = checkHosts(hosts, 'auth.hosts');
  if (repository_urls.length === 0 && h.length === 0) {
    throw new CredentialInputError('a git_token needs auth.repository_urls or auth.hosts: the repositories or hosts it may be sent to');
  }
  return { repository_urls, hosts: h };
}

/** Applies an update to a credential's public record and secret. */
export function applyUpdate(current: PublicAuth, secret: AnySecret, update: AuthUpdate): { auth: PublicAuth; secret: AnySecret } {
  if (update.type !== current.type) throw new CredentialInputError(`auth.type cannot change from '${current.type}' to '${update.type}'`);
  const auth = { ...current } as Record<string, any>;
  const s = { ...secret } as Record<string, any>;
  switch (update.type) {
    case 'static_bearer':
      if (update.token != null) s.token = needSecret(update.token, 'token');
      break;
    case 'mcp_oauth': {
      if (update.access_token != null) s.access_token = needSecret(update.access_token, 'access_token');
      if (update.expires_at !== undefined) auth.expires_at = futureTime(update.expires_at, 'auth.expires_at');
      if (update.refresh === null) {
        auth.refresh = null;
        delete s.refresh_token;
        delete s.client_secret;
      } else if (update.refresh) {
        const r = update.refresh;
        if (!auth.refresh) throw new CredentialInputError('auth.refresh: this credential has no refresh configuration to update (it is set at create)');
        const refresh = { ...auth.refresh };
        if (r.refresh_token != null) s.refresh_token = needSecret(r.refresh_token, 'refresh.refresh_token');
        if (r.scope !== undefined) refresh.scope = r.scope === '' || r.scope === null ? null : r.scope;
        if (r.token_endpoint_auth) {
          // The SDK: the credential keeps its current basic/post type whatever type is sent.
          if (refresh.token_endpoint_auth.type === 'none') {
            throw new CredentialInputError("auth.refresh.token_endpoint_auth: a client secret can be set only on a credential that uses client_secret_basic or client_secret_post");
          }
          if (r.token_endpoint_auth.client_secret != null) s.client_secret = needSecret(r.token_endpoint_auth.client_secret, 'refresh.token_endpoint_auth.client_secret');
        }
        auth.refresh = refresh;
      }
      break;
    }
    case 'environment_variable': {
      if (update.secret_value != null) s.secret_value = needSecret(update.secret_value, 'secret_value');
      if (update.networking) auth.networking = checkNetworking(update.networking);
      if (update.injection_location) {
        const inj = { ...auth.injection_location };
        if (update.injection_location.body !== undefined) inj.body = update.injection_location.body;
        if (update.injection_location.header !== undefined) inj.header = update.injection_location.header;
        if (!inj.body && !inj.header) throw new CredentialInputError('auth.injection_location: at least one of body and header must stay enabled');
        auth.injection_location = inj;
      }
      break;
    }
    case 'ssh_private_key': {
      if (update.passphrase != null && update.private_key == null) {
        throw new CredentialInputError('auth.passphrase can change only with auth.private_key (send both)');
      }
      if (update.private_key != null) {
        const passphrase = update.passphrase ?? undefined;
        Object.assign(auth, readSshKey(update.private_key, passphrase));
        s.private_key = update.private_key;
        if (passphrase) s.passphrase = passphrase;
        else delete s.passphrase;
      }
      if (update.hosts != null) auth.hosts = checkHosts(update.hosts, 'auth.hosts');
      break;
    }
    case 'git_token': {
      if (update.token != null) s.token = needSecret(update.token, 'token');
      if (update.username != null) auth.username = update.username;
      if (update.repository_urls != null || update.hosts != null) {
        Object.assign(auth, gitScope(update.repository_urls ?? auth.repository_urls, update.hosts ?? auth.hosts));
      }
      break;
    }
    case 'model_api_key':
      if (update.api_key != null) s.api_key = needSecret(update.api_key, 'api_key');
      if (update.header != null) auth.header = update.header;
      break;
    case 'environment_key':
      // Nothing to change: a key is replaced by revoking it and making another.
      break;
  }
  return { auth: auth as PublicAuth, secret: s as AnySecret };
}

/**
 * The strings redaction looks for. A PEM private key is looked for line by line, so a key
 * printed with other line endings, or in part, is still caught.
 */
export function secretValues(kind: CredentialKind, secret: AnySecret): string[] {
  const values: string[] = [];
  for (const [field, v] of Object.entries(secret)) {
    if (typeof v !== 'string' || !v) continue;
    if (kind === 'ssh_private_key' && field === 'private_key') {
      for (const line of v.split(/\r?\n/)) {
        const t = line.trim();
        if (t.length >= 16 && !/^-----(BEGIN|END) /.test(t) && !/^[A-Za-z-]+: /.test(t)) values.push(t);
      }
    } else values.push(v);
  }
  return values;
}
