import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_BETAS } from '../../main/api/http/betas';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * The `anthropic-beta` header and an environment's `scope`: both were accepted and had no
 * effect. Unknown betas now get the hosted API's 400; `scope: 'account'` (which Corral, with no
 * accounts, cannot honour) gets a 400 naming it, and 'organization' is the default reported.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const get = (p: string, headers: Record<string, string>) => fetch(`${t.server.url}${p}`, { headers: { 'x-api-key': t.apiKey, ...headers } });

describe('the anthropic-beta header', () => {
  it('refuses an unknown beta with the API\'s 400, naming the value', async () => {
    const res = await get('/v1/agents', { 'anthropic-beta': 'managed-agents-2026-04-01, no-such-beta-2099-01-01' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^Unexpected value\(s\) `no-such-beta-2099-01-01` for the `anthropic-beta` header/);
    expect(body.error.message).not.toContain('managed-agents');
    // Through the SDK's own betas parameter, too.
    const err = await t.client.beta.agents.list({ betas: ['made-up-2026-01-01'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((err as Error).message)).toContain('made-up-2026-01-01');
  });

  it('accepts every beta the SDK knows, and none at all', async () => {
    expect((await get('/v1/agents', {})).status).toBe(200);
    expect((await get('/v1/agents', { 'anthropic-beta': KNOWN_BETAS.join(',') })).status).toBe(200);
    expect((await t.client.beta.agents.list({ betas: ['files-api-2025-04-14'] })).data).toBeDefined();
  });

  it('knows exactly the betas of the installed SDK', () => {
    const dts = fs.readFileSync(path.join(__dirname, '../../node_modules/@anthropic-ai/sdk/resources/beta/beta.d.ts'), 'utf8');
    const union = /export type AnthropicBeta = \(string & \{\}\) \| (.*?);\n/.exec(dts)![1]!;
    const sdk = [...union.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect([...KNOWN_BETAS].sort()).toEqual(sdk.sort());
  });
});

describe('an environment\'s scope', () => {
  it('defaults to organization, accepts it, and refuses account with a 400 naming scope', async () => {
    const plain = await t.client.beta.environments.create({ name: 'plain' });
    expect(plain.scope).toBe('organization');
    const org = await t.client.beta.environments.create({ name: 'org', scope: 'organization' });
    expect(org.scope).toBe('organization');
    const before = t.host.environments.list({ limit: 1000 }).data.length;
    for (const attempt of [
      () => t.client.beta.environments.create({ name: 'mine', scope: 'account' }),
      () => t.client.beta.environments.update(org.id, { scope: 'account' }),
    ]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as { error: { error: { message: string } } }).error.error.message).toMatch(/^scope: scope 'account' is not supported by Corral yet/);
    }
    expect(t.host.environments.list({ limit: 1000 }).data.length).toBe(before);
    expect((await t.client.beta.environments.retrieve(org.id)).scope).toBe('organization');
  });
});
