import Anthropic from '@anthropic-ai/sdk';
import type { Page } from '@playwright/test';

/** What the e2e specs share: the SDK client on the server global setup started, and a few helpers. */
export const baseURL = process.env.E2E_BASE_URL!;
export const apiKey = process.env.E2E_API_KEY!;
export const client = new Anthropic({ apiKey, baseURL, maxRetries: 0 });
/**
 * A fresh one-time link, as `npm run serve -- link` gets it (POST /v1/corral/ui_link): it
 * authorises the page once.
 */
export async function freshLink(): Promise<string> {
  const res = await fetch(`${baseURL}/v1/corral/ui_link`, { method: 'POST', headers: { 'x-api-key': apiKey } });
  if (!res.ok) throw new Error(`minting a link failed: ${res.status}`);
  return ((await res.json()) as { url: string }).url;
}

/** A session of a fresh agent on a local environment, started with one user message. */
export async function newSession(title: string, first = 'first message') {
  const agent = await client.beta.agents.create({ name: 'e2e-agent', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  const env = await client.beta.environments.create({ name: 'e2e-env', config: { type: 'local' } as never });
  return client.beta.sessions.create({
    agent: agent.id,
    environment_id: env.id,
    title,
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: first }] }],
  });
}

/** The event rows of one type. */
export const rowsOf = (page: Page, type: string) => page.locator(`[data-testid="event-row"][data-type="${type}"]`);
