/**
 * Credential scopes: which host names, repository URLs and MCP server URLs a credential names,
 * and the one check (`allows`) every use of a credential goes through.
 */
import type { CredentialKind, Networking, PublicAuth } from './kinds';

/** Bad credential input the schema cannot see (an unreadable key, an impossible update). */
export class CredentialInputError extends Error {
  override readonly name = 'CredentialInputError';
}

const HOST_ENTRY = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Host entries as the API takes them: a bare host name, an IPv4 address, or `*.` + a domain; no URL, port, path or IPv6. */
export function checkHosts(hosts: readonly string[], field: string): string[] {
  const out: string[] = [];
  for (const [i, h] of hosts.entries()) {
    if (!HOST_ENTRY.test(h)) throw new CredentialInputError(`${field}[${i}]: '${h}' is not a bare host name, IPv4 address or *.domain (no scheme, port, path or IPv6)`);
    const lower = h.toLowerCase();
    if (out.includes(lower)) throw new CredentialInputError(`${field}[${i}]: '${h}' is listed twice`);
    out.push(lower);
  }
  return out;
}

/** Does a host entry (`api.example.com`, `*.example.com`) match a request's host? */
export function hostMatches(entry: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (entry.startsWith('*.')) return h.endsWith(entry.slice(1)) && h.length > entry.length - 1;
  return h === entry;
}

/** A repository URL as compared: scheme and host lower-case, no credentials, no `.git`, no trailing slash. */
export function normalizeRepositoryUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CredentialInputError(`'${raw}' is not a URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new CredentialInputError(`'${raw}': only http(s) repository URLs can carry a token`);
  if (u.username || u.password) throw new CredentialInputError(`'${raw}': a repository URL must not carry credentials`);
  const path = u.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
  return `${u.protocol}//${u.host.toLowerCase()}${path}`;
}

/** An MCP server URL as compared (the URL parser's form, without a trailing slash on the path). */
export function normalizeServerUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CredentialInputError(`'${raw}' is not a URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new CredentialInputError(`'${raw}': an MCP server URL is http(s)`);
  u.hash = '';
  const s = u.href;
  return u.search ? s : s.replace(/\/$/, '');
}

/** What a credential is wanted for: the scope check every use goes through. */
export type CredentialPurpose =
  | { use: 'model' }
  | { use: 'mcp'; server_url: string }
  | { use: 'git'; url: string }
  | { use: 'ssh'; host: string }
  | { use: 'egress'; host: string; secret_name?: string }
  | { use: 'dial_in'; environment_id: string };

/** Kinds that can serve each use. */
export const KINDS_FOR: Record<CredentialPurpose['use'], readonly CredentialKind[]> = {
  model: ['model_api_key'],
  mcp: ['mcp_oauth', 'static_bearer'],
  git: ['git_token'],
  ssh: ['ssh_private_key'],
  egress: ['environment_variable'],
  dial_in: ['environment_key'],
};

/** Does a credential's scope allow this use? */
export function allows(auth: PublicAuth, purpose: CredentialPurpose): boolean {
  if (!KINDS_FOR[purpose.use].includes(auth.type)) return false;
  const a = auth as Record<string, any>;
  switch (purpose.use) {
    case 'model':
      return true;
    case 'mcp': {
      try {
        return a.mcp_server_url === normalizeServerUrl(purpose.server_url);
      } catch {
        return false;
      }
    }
    case 'git': {
      let repo: string;
      let host: string;
      try {
        const u = new URL(purpose.url);
        host = u.hostname;
        u.username = '';
        u.password = '';
        repo = normalizeRepositoryUrl(u.href);
      } catch {
        return false;
      }
      return (a.repository_urls as string[]).includes(repo) || (a.hosts as string[]).some((h) => hostMatches(h, host));
    }
    case 'ssh':
      return (a.hosts as string[]).length === 0 || (a.hosts as string[]).some((h) => hostMatches(h, purpose.host));
    case 'egress': {
      if (purpose.secret_name !== undefined && a.secret_name !== purpose.secret_name) return false;
      const n = a.networking as Networking;
      return n.type === 'unrestricted' || n.allowed_hosts.some((h) => hostMatches(h, purpose.host));
    }
    case 'dial_in':
      return a.environment_id === purpose.environment_id;
  }
}

/** What must be unique among a vault's live credentials: one per MCP server URL, one per variable name. */
export function uniqueKeyOf(auth: PublicAuth): string | undefined {
  const a = auth as Record<string, any>;
  if (auth.type === 'static_bearer' || auth.type === 'mcp_oauth') return `mcp:${a.mcp_server_url}`;
  if (auth.type === 'environment_variable') return `env:${a.secret_name}`;
  return undefined;
}
