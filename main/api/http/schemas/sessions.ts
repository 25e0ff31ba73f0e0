import { z } from 'zod';
import { mcpServerParam, modelParam, toolParam } from './agents';
import { metadata, metadataPatch } from './common';
import { initialEventParams } from './events';
import { notYet } from './not-yet';
import { mountPath } from './mount-path';

const agentRef = z.union([
  z.string().min(1),
  z.object({ type: z.literal('agent'), id: z.string().min(1), version: z.number().int().min(1).optional() }).strict(),
  z
    .object({
      type: z.literal('agent_with_overrides'),
      id: z.string().min(1),
      version: z.number().int().min(1).optional(),
      model: modelParam.optional(),
      system: z.string().max(100_000).nullish(),
      tools: z.array(toolParam).max(128).optional(),
      mcp_servers: z.array(mcpServerParam).max(20).optional(),
      skills: notYet(z.array(z.object({ type: z.enum(['anthropic', 'custom']), skill_id: z.string(), version: z.string().nullish() }).strict()).optional(), 'agent.skills', 'no Skills API'),
    })
    .strict(),
]);

const checkout = z.discriminatedUnion('type', [
  z.object({ type: z.literal('branch'), name: z.string().min(1) }).strict(),
  z.object({ type: z.literal('commit'), sha: z.string().regex(/^[0-9a-f]{7,64}$/i) }).strict(),
]);
/** A repository resource, at creation and in `POST …/resources` (Corral's addition there). */
/** Resources a session may have, at creation and added later (session-resources.ts). */
export const MAX_SESSION_RESOURCES = 50;

export const repositoryResource = z
  .object({
    type: z.literal('github_repository'),
    url: z.string().url(),
    authorization_token: z.string().optional(),
    checkout: checkout.nullish(),
    mount_path: mountPath.nullish(),
  })
  .strict();
/** A file resource (refused: Corral has no Files API). */
export const fileResource = z.object({ type: z.literal('file'), file_id: z.string().min(1), mount_path: z.string().min(1).nullish() }).strict();
const resource = z.discriminatedUnion('type', [
  repositoryResource,
  fileResource,
  z
    .object({
      type: z.literal('memory_store'),
      memory_store_id: z.string().min(1),
      access: z.enum(['read_write', 'read_only']).nullish(),
      instructions: z.string().nullish(),
    })
    .strict(),
]);
export type ResourceParam = z.infer<typeof resource>;

// Enforcing a list-cost limit needs every model's prices, which Corral does not keep.
const budget = notYet(z.object({ type: z.literal('limit'), max_list_cost: z.object({}).passthrough() }).strict(), 'budget', 'no list prices to count the cost against');

export const sessionCreateBody = z
  .object({
    agent: agentRef,
    environment_id: z.string().min(1),
    initial_events: z.array(initialEventParams).max(100).optional(),
    metadata: metadata.optional(),
    resources: z.array(resource).max(MAX_SESSION_RESOURCES).optional(),
    title: z.string().max(500).nullish(),
    vault_ids: z.array(z.string().min(1)).max(20).optional(),
    budget: budget.optional(),
  })
  .strict();

export const sessionUpdateBody = z
  .object({
    agent: z.object({ tools: z.array(toolParam).max(128).optional(), mcp_servers: z.array(mcpServerParam).max(20).optional() }).strict().optional(),
    budget: budget.nullish(),
    metadata: metadataPatch.nullish(),
    title: z.string().max(500).nullish(),
    vault_ids: z.array(z.string().min(1)).max(20).optional(),
  })
  .strict();

/** Corral's own addition: fork a session at a position (`POST /v1/sessions/{id}/fork`). */
export const sessionForkBody = z
  .object({ at_seq: z.number().int().min(0).optional(), at_event_id: z.string().min(1).optional(), title: z.string().max(500).nullish() })
  .strict();
