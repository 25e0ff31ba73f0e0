import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import type { Host } from '../../../host';
import { CredentialInputError } from '../../../vault/kinds';
import { VaultLockedError, VaultNotFoundError, VaultStateError, type CredentialInfo, type VaultInfo } from '../../../vault/vault';
import { applyMetadataPatch } from '../schemas/common';
import { credentialCreateBody, credentialUpdateBody, vaultCreateBody, vaultUpdateBody } from '../schemas/vaults';
import { ApiError, describeZodError, errorResponse, notFound, toApiError } from '../errors';
import { queryBool, queryInt } from '../request';

/** The API's vault object (Corral adds `is_default`). */
export const vaultToApi = (v: VaultInfo) => ({ type: 'vault' as const, ...v });

/** The API's credential object: name, kind, scope and last use — never a value (Corral adds `last_used_at`). */
export const credentialToApi = (c: CredentialInfo) => ({ type: 'vault_credential' as const, ...c });

/**
 * A JSON body that may carry secrets: like `jsonBody`, but a parse error does not quote the
 * text (the JSON parser's message would show part of it).
 */
async function secretBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ApiError('invalid_request_error', 'the body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ApiError('invalid_request_error', describeZodError(parsed.error));
  return parsed.data;
}

/** The vault's errors as the API reports them. */
function apiErrorOf(err: unknown): unknown {
  if (err instanceof VaultNotFoundError) return notFound(err.what, err.id);
  if (err instanceof VaultStateError) {
    return new ApiError(err.code === 'credential_conflict' ? 'conflict_error' : 'invalid_request_error', err.message, { error_code: err.code });
  }
  if (err instanceof CredentialInputError) return new ApiError('invalid_request_error', err.message);
  if (err instanceof VaultLockedError) return new ApiError('api_error', err.message);
  return err;
}

/** `/v1/vaults` and `/v1/vaults/{id}/credentials`: create, retrieve, update, list, delete, archive. */
export function vaultRoutes(host: Host): Hono {
  const app = new Hono();
  const { vault } = host;
  app.onError((err, c) => errorResponse(c, toApiError(apiErrorOf(err))));
  const listOpts = (c: Context) => ({
    limit: queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!,
    page: c.req.query('page'),
    includeArchived: queryBool(c, 'include_archived'),
  });
  const mustVault = (id: string) => vault.getVault(id) ?? (() => { throw notFound('vault', id); })();

  app.post('/', async (c) => {
    const body = await secretBody(c, vaultCreateBody);
    return c.json(vaultToApi(vault.createVault(body)));
  });

  app.get('/', (c) => {
    const page = vault.listVaults(listOpts(c));
    return c.json({ data: page.data.map(vaultToApi), next_page: page.next_page });
  });

  app.get('/:id', (c) => c.json(vaultToApi(mustVault(c.req.param('id')))));

  app.post('/:id', async (c) => {
    const current = mustVault(c.req.param('id'));
    const body = await secretBody(c, vaultUpdateBody);
    return c.json(
      vaultToApi(
        vault.updateVault(current.id, {
          display_name: body.display_name ?? undefined,
          metadata: body.metadata === undefined ? undefined : (stored) => applyMetadataPatch(stored, body.metadata),
          is_default: body.is_default,
        }),
      ),
    );
  });

  app.delete('/:id', (c) => {
    const id = c.req.param('id');
    vault.deleteVault(id);
    return c.json({ id, type: 'vault_deleted' });
  });

  app.post('/:id/archive', (c) => c.json(vaultToApi(vault.archiveVault(c.req.param('id')))));

  // --- credentials

  app.post('/:id/credentials', async (c) => {
    const vaultId = mustVault(c.req.param('id')).id;
    const body = await secretBody(c, credentialCreateBody);
    return c.json(credentialToApi(await vault.createCredential(vaultId, body)));
  });

  app.get('/:id/credentials', (c) => {
    const page = vault.listCredentials(c.req.param('id'), listOpts(c));
    return c.json({ data: page.data.map(credentialToApi), next_page: page.next_page });
  });

  app.get('/:id/credentials/:cid', (c) => {
    const vaultId = mustVault(c.req.param('id')).id;
    const found = vault.getCredential(vaultId, c.req.param('cid'));
    if (!found) throw notFound('credential', c.req.param('cid'));
    return c.json(credentialToApi(found));
  });

  app.post('/:id/credentials/:cid', async (c) => {
    const vaultId = mustVault(c.req.param('id')).id;
    const id = c.req.param('cid');
    if (!vault.getCredential(vaultId, id)) throw notFound('credential', id);
    const body = await secretBody(c, credentialUpdateBody);
    return c.json(
      credentialToApi(
        await vault.updateCredential(vaultId, id, {
          display_name: body.display_name,
          // Patched inside the vault's transaction: the stored map as it is then, not as it was
          // before the body arrived (a concurrent patch would be lost).
          metadata: body.metadata === undefined ? undefined : (stored) => applyMetadataPatch(stored, body.metadata),
          auth: body.auth,
        }),
      ),
    );
  });

  app.delete('/:id/credentials/:cid', (c) => {
    const id = c.req.param('cid');
    vault.deleteCredential(c.req.param('id'), id);
    return c.json({ id, type: 'vault_credential_deleted' });
  });

  app.post('/:id/credentials/:cid/archive', (c) => c.json(credentialToApi(vault.archiveCredential(c.req.param('id'), c.req.param('cid')))));

  return app;
}
