import { z } from 'zod';
import { metadata, metadataPatch } from './common';

/**
 * Vaults and credentials as the SDK's `client.beta.vaults` sends them, plus Corral's own
 * credential kinds (`ssh_private_key`, `git_token`, `model_api_key`) and the vault's
 * `is_default`. Strict: a field Corral does not act on is a 400 that names it.
 */

const displayName = z.string().min(1).max(255);

export const vaultCreateBody = z
  .object({ display_name: displayName, metadata: metadata.optional(), is_default: z.boolean().optional() })
  .strict();

export const vaultUpdateBody = z
  .object({ display_name: displayName.nullish(), metadata: metadataPatch.nullish(), is_default: z.boolean().optional() })
  .strict();

const secret = z.string().min(1).max(64 * 1024);
const httpUrl = z.string().url().max(2048);
const hosts = z.array(z.string().min(1).max(253)).max(16);
const networking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }).strict(),
  z.object({ type: z.literal('limited'), allowed_hosts: hosts }).strict(),
]);
const injection = z.object({ body: z.boolean().optional(), header: z.boolean().optional() }).strict();
const envName = z.string().min(1).max(256).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, _; not starting with a digit)');
const modelHeader = z.enum(['x-api-key', 'authorization']);

const authCreate = z.discriminatedUnion('type', [
  z.object({ type: z.literal('static_bearer'), token: secret, mcp_server_url: httpUrl }).strict(),
  z
    .object({
      type: z.literal('mcp_oauth'),
      access_token: secret,
      mcp_server_url: httpUrl,
      expires_at: z.string().nullish(),
      refresh: z
        .object({
          client_id: z.string().min(1).max(1024),
          refresh_token: secret,
          token_endpoint: httpUrl,
          token_endpoint_auth: z.discriminatedUnion('type', [
            z.object({ type: z.literal('none') }).strict(),
            z.object({ type: z.literal('client_secret_basic'), client_secret: secret }).strict(),
            z.object({ type: z.literal('client_secret_post'), client_secret: secret }).strict(),
          ]),
          resource: z.string().max(2048).nullish(),
          scope: z.string().max(2048).nullish(),
        })
        .strict()
        .nullish(),
    })
    .strict(),
  z
    .object({ type: z.literal('environment_variable'), secret_name: envName, secret_value: secret, networking, injection_location: injection.optional() })
    .strict(),
  // Corral: an SSH private key (OpenSSH or PEM), its passphrase, and the hosts it may log in to (none: any).
  z.object({ type: z.literal('ssh_private_key'), private_key: secret, passphrase: z.string().max(1024).nullish(), hosts: hosts.optional() }).strict(),
  // Corral: a git token, sent (HTTP Basic, as `username`) only to these repositories or hosts.
  z
    .object({
      type: z.literal('git_token'),
      token: secret,
      username: z.string().min(1).max(256).nullish(),
      repository_urls: z.array(httpUrl).max(64).optional(),
      hosts: hosts.optional(),
    })
    .strict(),
  // Corral: a model API key for the host's model proxy (x-api-key, or Authorization: Bearer).
  z.object({ type: z.literal('model_api_key'), api_key: secret, header: modelHeader.optional() }).strict(),
]);

const authUpdate = z.discriminatedUnion('type', [
  z.object({ type: z.literal('static_bearer'), token: secret.nullish() }).strict(),
  z
    .object({
      type: z.literal('mcp_oauth'),
      access_token: secret.nullish(),
      expires_at: z.string().nullish(),
      refresh: z
        .object({
          refresh_token: secret.nullish(),
          scope: z.string().max(2048).nullish(),
          token_endpoint_auth: z
            .object({ type: z.enum(['client_secret_basic', 'client_secret_post']), client_secret: secret.nullish() })
            .strict()
            .optional(),
        })
        .strict()
        .nullish(),
    })
    .strict(),
  z.object({ type: z.literal('environment_variable'), secret_value: secret.nullish(), networking: networking.nullish(), injection_location: injection.optional() }).strict(),
  z.object({ type: z.literal('ssh_private_key'), private_key: secret.nullish(), passphrase: z.string().max(1024).nullish(), hosts: hosts.nullish() }).strict(),
  z
    .object({
      type: z.literal('git_token'),
      token: secret.nullish(),
      username: z.string().min(1).max(256).nullish(),
      repository_urls: z.array(httpUrl).max(64).nullish(),
      hosts: hosts.nullish(),
    })
    .strict(),
  z.object({ type: z.literal('model_api_key'), api_key: secret.nullish(), header: modelHeader.nullish() }).strict(),
]);

export const credentialCreateBody = z
  .object({ auth: authCreate, display_name: z.string().max(255).nullish(), metadata: metadata.optional() })
  .strict();

export const credentialUpdateBody = z
  .object({ auth: authUpdate.optional(), display_name: displayName.nullish(), metadata: metadataPatch.nullish() })
  .strict();
