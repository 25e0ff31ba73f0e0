import { Hono } from 'hono';
import { z } from 'zod';
import type { Host } from '../../../host';
import { ApiError, notFound } from '../errors';
import { jsonBody } from '../request';
import { notSupportedMessage } from '../schemas/not-yet';
import { fileResource, MAX_SESSION_RESOURCES, repositoryResource } from '../schemas/sessions';
import { normalizeResources } from '../shapes/session';

/**
 * `POST /v1/sessions/{id}/resources`. The API adds `file` resources only; Corral has no Files API
 * and refuses them, and adds what it can apply: a `github_repository` (Corral's addition, the
 * same fields as at session creation).
 */
const addBody = z.discriminatedUnion('type', [repositoryResource, fileResource]);
/** `POST /v1/sessions/{id}/resources/{rid}`: the API's only change is a new token. */
const updateBody = z.object({ authorization_token: z.string() }).strict();

const TOKEN_IN_VAULT =
  "authorization_token is not accepted: Corral keeps credentials only in its vault. Store or rotate the token as a git_token credential (client.beta.vaults.credentials.create/update, auth.repository_urls naming this repository) in one of the session's vault_ids: the git proxy uses the vault's current value from the next git command on";

type Resource = Record<string, unknown> & { id: string; type: string; mount_path?: string };

/**
 * Session resources after creation: add, update, delete (list and retrieve are in sessions.ts).
 * An added repository is cloned onto the session's main hand at once if it is provisioned, else
 * at its next provisioning (with the others); a deleted one is left on a hand that has it (the
 * agent's work in it is not thrown away) and is not applied to later hands. Each change is
 * logged as `session.updated` with the new `resources`.
 */
export function sessionResourceRoutes(host: Host): Hono {
  const app = new Hono();
  const { log } = host;
  const resourcesOf = (id: string) => (log.getSession(id).record.resources ?? []) as Resource[];
  const record = (id: string, next: Resource[]) => {
    log.updateSessionRecord(id, (r) => ({ ...r, resources: next }));
    log.emitEvent(id, { type: 'session.updated', resources: next });
  };

  app.post('/:id/resources', async (c) => {
    const id = c.req.param('id');
    resourcesOf(id); // 404 before reading the body
    const body = await jsonBody(c, addBody);
    if (body.type === 'file') throw new ApiError('invalid_request_error', notSupportedMessage("type 'file'", 'no Files API; github_repository resources can be added'));
    if (body.authorization_token !== undefined) throw new ApiError('invalid_request_error', TOKEN_IN_VAULT);
    const [added] = normalizeResources([body]) as Resource[];
    // The list as it is now, after the body arrived: one read before it would drop a resource
    // another request added meanwhile (and miss its mount_path). Read, check and write on one
    // tick (the log is synchronous).
    const current = resourcesOf(id);
    if (current.length >= MAX_SESSION_RESOURCES) throw new ApiError('invalid_request_error', `a session has at most ${MAX_SESSION_RESOURCES} resources (as at creation); delete one first`);
    const clash = current.find((r) => r.mount_path === added!.mount_path);
    if (clash) throw new ApiError('invalid_request_error', `mount_path '${added!.mount_path}' is already used by resource ${clash.id}`);
    record(id, [...current, added!]);
    // Cloning can take minutes: the answer does not wait; the log gets hand.resource_applied/failed.
    host.hands.applyAddedResource(id, added!.id).catch((err: unknown) => host.logger.warn({ session_id: id, error: String(err) }, 'applying an added resource failed'));
    return c.json(added);
  });

  app.post('/:id/resources/:rid', async (c) => {
    const id = c.req.param('id');
    const rid = c.req.param('rid');
    if (!resourcesOf(id).some((r) => r.id === rid)) throw notFound('resource', rid);
    await jsonBody(c, updateBody);
    throw new ApiError('invalid_request_error', TOKEN_IN_VAULT);
  });

  app.delete('/:id/resources/:rid', (c) => {
    const id = c.req.param('id');
    const rid = c.req.param('rid');
    const current = resourcesOf(id);
    if (!current.some((r) => r.id === rid)) throw notFound('resource', rid);
    record(
      id,
      current.filter((r) => r.id !== rid),
    );
    return c.json({ id: rid, type: 'session_resource_deleted' });
  });

  return app;
}
