import type { UiCredential } from '../../../../main/api/ui/contract';

/** The kinds the panel adds, the field that holds each one's value, and its scope field. */
export const KINDS = {
  static_bearer: { label: 'MCP bearer token', value: 'token', scope: { key: 'mcp_server_url', label: 'MCP server URL', required: true } },
  model_api_key: { label: 'Model API key', value: 'api_key', scope: null },
  git_token: { label: 'Git token', value: 'token', scope: { key: 'hosts', label: 'Git hosts (comma-separated; empty: any)', required: false } },
  environment_variable: { label: 'Environment variable', value: 'secret_value', scope: { key: 'secret_name', label: 'Variable name', required: true } },
} as const;
export type PanelKind = keyof typeof KINDS;

/** The field a rotation sends the new value in, per kind (those the panel cannot add too). */
export const VALUE_FIELD: Record<string, string> = {
  static_bearer: 'token',
  mcp_oauth: 'access_token',
  model_api_key: 'api_key',
  git_token: 'token',
  environment_variable: 'secret_value',
  ssh_private_key: 'private_key',
};

/** The `auth` of a new credential from the form's fields. */
export function authOf(kind: PanelKind, scope: string, value: string): Record<string, unknown> {
  const k = KINDS[kind];
  const auth: Record<string, unknown> = { type: kind, [k.value]: value };
  if (kind === 'static_bearer') auth.mcp_server_url = scope.trim();
  if (kind === 'git_token') {
    const hosts = scope.split(',').map((h) => h.trim()).filter(Boolean);
    if (hosts.length) auth.hosts = hosts;
  }
  if (kind === 'environment_variable') Object.assign(auth, { secret_name: scope.trim(), networking: { type: 'unrestricted' } });
  return auth;
}

/** What a credential may be used for, in words. */
export function scopeOf(c: UiCredential): string {
  const a = c.auth as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) && v.length ? v.join(', ') : null);
  switch (a.type) {
    case 'static_bearer':
    case 'mcp_oauth':
      return String(a.mcp_server_url ?? '');
    case 'environment_variable': {
      const net = a.networking as { type?: string; allowed_hosts?: string[] } | undefined;
      return `$${String(a.secret_name)} → ${net?.type === 'limited' ? list(net.allowed_hosts) ?? 'no host' : 'any host'}`;
    }
    case 'git_token':
      return list(a.repository_urls) ?? list(a.hosts) ?? 'any repository';
    case 'ssh_private_key':
      return list(a.hosts) ?? 'any host';
    case 'model_api_key':
      return `model requests (${String(a.header ?? 'x-api-key')})`;
    case 'environment_key':
      return `machines that dial in to environment ${String(a.environment_id)}`;
    default:
      return '';
  }
}
