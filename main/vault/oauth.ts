/**
 * The OAuth refresh-token exchange (RFC 6749 §6) for `mcp_oauth` credentials: the host calls
 * the token endpoint with the stored refresh token and client credentials, and keeps the new
 * access token (and a rotated refresh token) in the vault. Nothing here logs a token.
 */
import { CredentialInputError } from './scope';

export interface RefreshRequest {
  token_endpoint: string;
  client_id: string;
  refresh_token: string;
  token_endpoint_auth: 'none' | 'client_secret_basic' | 'client_secret_post';
  client_secret?: string;
  scope?: string | null;
  resource?: string | null;
}

export interface RefreshResult {
  access_token: string;
  /** RFC 3339, from `expires_in`; null when the server gave none. */
  expires_at: string | null;
  /** A new refresh token when the server rotates them. */
  refresh_token?: string;
}

/** The token endpoint refused or could not be reached; `status` is absent for a connection error. */
export class OAuthRefreshError extends Error {
  override readonly name = 'OAuthRefreshError';
  constructor(
    message: string,
    readonly status?: number,
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

// RFC 6749 §2.3.1: client id and secret are form-encoded before they go into Basic auth.
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

export async function exchangeRefreshToken(req: RefreshRequest, opts: { timeoutMs?: number; now?: () => number } = {}): Promise<RefreshResult> {
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: req.refresh_token });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (req.scope) body.set('scope', req.scope);
  if (req.resource) body.set('resource', req.resource);
  if (req.token_endpoint_auth === 'client_secret_basic') {
    headers.authorization = `Basic ${Buffer.from(`${formEncode(req.client_id)}:${formEncode(req.client_secret ?? '')}`).toString('base64')}`;
  } else {
    body.set('client_id', req.client_id);
    if (req.token_endpoint_auth === 'client_secret_post') body.set('client_secret', req.client_secret ?? '');
  }
  let res: Response;
  try {
    res = await fetch(req.token_endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000), redirect: 'error' });
  } catch (err) {
    throw new OAuthRefreshError(`the token endpoint ${req.token_endpoint} could not be reached: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: reported below
  }
  if (!res.ok) {
    const code = typeof json.error === 'string' ? json.error : undefined;
    const why = code ? `${code}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}` : `HTTP ${res.status}`;
    throw new OAuthRefreshError(`the token endpoint refused the refresh (${why})`, res.status, code);
  }
  if (typeof json.access_token !== 'string' || !json.access_token) {
    throw new OAuthRefreshError('the token endpoint answered without an access_token', res.status);
  }
  const expiresIn = Number(json.expires_in);
  const now = opts.now?.() ?? Date.now();
  return {
    access_token: json.access_token,
    expires_at: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now + expiresIn * 1000).toISOString() : null,
    ...(typeof json.refresh_token === 'string' && json.refresh_token ? { refresh_token: json.refresh_token } : {}),
  };
}

/**
 * A stored `mcp_oauth` credential's secret after exchanging its refresh token (the caller seals
 * and keeps it), and the new expiry for its public record.
 */
export async function refreshedSecret(
  row: { id: string; record: { auth: Record<string, unknown> } },
  secret: { access_token: string; refresh_token?: string; client_secret?: string },
): Promise<{ secret: typeof secret; expires_at: string | null }> {
  const auth = row.record.auth as Record<string, any>;
  if (auth.type !== 'mcp_oauth' || !auth.refresh) throw new CredentialInputError(`credential '${row.id}' has no refresh configuration`);
  if (!secret.refresh_token) throw new CredentialInputError(`credential '${row.id}' has no refresh token`);
  const got = await exchangeRefreshToken({
    token_endpoint: auth.refresh.token_endpoint,
    client_id: auth.refresh.client_id,
    refresh_token: secret.refresh_token,
    token_endpoint_auth: auth.refresh.token_endpoint_auth.type,
    client_secret: secret.client_secret,
    scope: auth.refresh.scope,
    resource: auth.refresh.resource,
  });
  return { secret: { ...secret, access_token: got.access_token, ...(got.refresh_token ? { refresh_token: got.refresh_token } : {}) }, expires_at: got.expires_at };
}
