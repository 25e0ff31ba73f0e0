import type { MiddlewareHandler } from 'hono';
import { ApiError, clip, errorResponse } from './errors';

/**
 * The `anthropic-beta` header, as the hosted API treats it: a request naming a beta the API
 * does not know is refused with a 400 ("Unexpected value(s) `x` for the `anthropic-beta`
 * header"), so a typo or a beta from a newer SDK than Corral knows is said at once rather than
 * silently served. Known betas are accepted on every route, as the API accepts them: a beta
 * only opens a feature's fields, and each of those fields is acted on or refused by name where
 * it appears (README, the field table). `managed-agents-2026-04-01`, which the hosted API
 * requires on its Managed Agents routes, is not required here: Corral has no other API for
 * those routes to be confused with, and scripts and the window call it without one.
 */

/**
 * Every beta name the SDK this Corral is built with knows (`AnthropicBeta` in
 * node_modules/@anthropic-ai/sdk/resources/beta/beta.d.ts); test/api/betas.test.ts checks the
 * two lists are the same, so an SDK upgrade that adds names fails there until this follows.
 */
export const KNOWN_BETAS: readonly string[] = [
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'output-128k-2025-02-19',
  'mcp-client-2025-04-04',
  'mcp-client-2025-11-20',
  'dev-full-thinking-2025-05-14',
  'interleaved-thinking-2025-05-14',
  'code-execution-2025-05-22',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'model-context-window-exceeded-2025-08-26',
  'fast-mode-2026-02-01',
  'output-300k-2026-03-24',
  'user-profiles-2026-03-24',
  'user-profiles-2026-08-18',
  'user-profiles-2026-09-04',
  'advisor-tool-2026-03-01',
  'managed-agents-2026-04-01',
  'dreaming-2026-04-21',
  'thinking-token-count-2026-05-13',
  'server-side-fallback-2026-06-01',
  'server-side-fallback-2026-07-01',
  'fallback-credit-2026-06-01',
  'fallback-credit-2026-07-01',
  'agent-memory-2026-07-22',
  'mid-conversation-tool-changes-2026-07-01',
  'compact-2026-01-12',
  'computer-use-2025-11-24',
  'mcp-tunnels-2026-06-22',
  'structured-outputs-2025-11-13',
  'task-budgets-2026-03-13',
  'thinking-display-updates-2026-08-18',
  'mid-conversation-output-config-2026-07-01',
  'thinking-binding-controls-2026-08-01',
  'mid-conversation-system-clear-at-2026-08-21',
  'compact-2026-09-04',
  'inline-tools-2026-09-15',
  'mcp-client-2026-09-15',
  'ce-plugins-2026-09-01',
  'spend-limit-reads-2026-09-26',
  'telemetry-destinations-2026-08-11',
  'webhooks-2026-10-07',
  'admin-user-sign-out-2026-10-08',
  'message-threads-2026-08-12',
  'analytics-usage-cost-2026-08-24',
  'experimental-claude-tag-2026-10-21',
  'message-batches-2024-09-24',
  'prompt-caching-2024-07-31',
  'pdfs-2024-09-25',
  'token-counting-2024-11-01',
  'token-efficient-tools-2025-02-19',
  'files-api-2025-04-14',
  'extended-cache-ttl-2025-04-11',
  'skills-2025-10-02',
  'cache-diagnosis-2026-04-07',
  'ce-user-management-2026-07-13',
  'ce-claude-code-managed-settings-2026-10-06',
  'efs-2026-10-01',
  'google-managed-data-controls-2026-09-01',
  'user-profiles-billing-2026-10-01',
];

const known = new Set(KNOWN_BETAS);

/** The values a request names (comma-separated, as the SDK joins them; repeated headers too). */
export function requestedBetas(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

/** Refuses a request that names an unknown beta, with the hosted API's message. */
export const refuseUnknownBetas: MiddlewareHandler = async (c, next) => {
  const unknown = requestedBetas(c.req.header('anthropic-beta')).filter((b) => !known.has(b));
  if (unknown.length > 0) {
    const named = unknown.slice(0, 5).map((b) => `\`${clip(b, 64)}\``).join(', ');
    return errorResponse(
      c,
      new ApiError('invalid_request_error', `Unexpected value(s) ${named} for the \`anthropic-beta\` header. Corral knows the betas of @anthropic-ai/sdk it is built with; try again without the header or with a known value.`),
    );
  }
  await next();
};
