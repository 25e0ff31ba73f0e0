import { z } from 'zod';
import { ENV_VAR_NAME, envSizeProblem } from '../../../env-vars';
import { metadata, metadataPatch, permissionPolicy } from './common';
import { notYet } from './not-yet';

const effortName = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
const modelConfig = z
  .object({
    id: z.string().min(1).max(200),
    // Sent with every model request (output_config.effort, inference_geo, speed: main/brain/agent-config.ts).
    effort: z.union([effortName, z.object({ type: effortName }).strict()]).nullish(),
    inference_geo: z.string().nullish(),
    speed: z.enum(['standard', 'fast']).nullish(),
  })
  .strict();
export const modelParam = z.union([z.string().min(1).max(200), modelConfig]);

const builtinToolNames = ['bash', 'edit', 'read', 'write', 'glob', 'grep', 'web_fetch', 'web_search'] as const;
const toolConfig = z
  .object({
    name: z.enum(builtinToolNames),
    type: z.enum(builtinToolNames).optional(),
    enabled: z.boolean().nullish(),
    permission_policy: permissionPolicy.nullish(),
  })
  .passthrough();
const defaultConfig = z.object({ enabled: z.boolean().nullish(), permission_policy: permissionPolicy.nullish() }).strict();

export const agentToolsetParam = z
  .object({ type: z.literal('agent_toolset_20260401'), configs: z.array(toolConfig).optional(), default_config: defaultConfig.nullish() })
  .strict();
// MCP calls are held for confirmation under always_ask (brain/permissions.ts), the API's default.
const mcpPolicy = permissionPolicy.nullish();
export const mcpToolsetParam = z
  .object({
    type: z.literal('mcp_toolset'),
    mcp_server_name: z.string().min(1),
    configs: z.array(z.object({ name: z.string().min(1), enabled: z.boolean().nullish(), permission_policy: mcpPolicy }).strict()).optional(),
    default_config: z.object({ enabled: z.boolean().nullish(), permission_policy: mcpPolicy }).strict().nullish(),
  })
  .strict();
export const customToolParam = z
  .object({
    type: z.literal('custom'),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'tool names are 1-128 letters, digits, _ or -'),
    description: z.string().max(10_000),
    input_schema: z.object({ type: z.literal('object') }).passthrough(),
  })
  .strict();
export const toolParam = z.discriminatedUnion('type', [agentToolsetParam, mcpToolsetParam, customToolParam]);

/** A stdio server's environment: as bounded as an environment config's (env-vars.ts), since it goes to exec too. */
export const STDIO_ENV_MAX_VARS = 256;
const stdioEnv = z
  .record(z.string().max(256).regex(ENV_VAR_NAME, 'environment variable names are letters, digits and _'), z.string().max(32_768))
  .refine((env) => Object.keys(env).length <= STDIO_ENV_MAX_VARS, `at most ${STDIO_ENV_MAX_VARS} environment variables`)
  .superRefine((env, ctx) => {
    const size = envSizeProblem(env);
    if (size) ctx.addIssue({ code: 'custom', message: size });
  });

/** The API's URL servers (Streamable HTTP), and Corral's stdio servers: a command the host runs (argv, no shell) with its own environment. */
export const mcpServerParam = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url'), name: z.string().min(1).max(100), url: z.string().url() }).strict(),
  z
    .object({
      type: z.literal('stdio'),
      name: z.string().min(1).max(100),
      command: z.array(z.string().min(1).max(4096)).min(1).max(256),
      env: stdioEnv.optional(),
    })
    .strict(),
]);
const skillParam = z
  .object({ type: z.enum(['anthropic', 'custom']), skill_id: z.string().min(1), version: z.string().nullish() })
  .strict();
const executionIdentity = z.discriminatedUnion('type', [
  z.object({ type: z.literal('service_account') }).strict(),
  z.object({ type: z.literal('aws_role'), role_arn: z.string().min(1) }).strict(),
]);

const agentFields = {
  description: z.string().max(2048).nullish(),
  // service_account is the default and what Corral does (commands run as the hand's own user).
  execution_identity: notYet(executionIdentity.nullish(), 'execution_identity', 'only service_account, the default', (v) => v?.type === 'service_account'),
  mcp_servers: z.array(mcpServerParam).max(20),
  multiagent: notYet(z.object({ type: z.string() }).passthrough().nullish(), 'multiagent', 'no threads or subagents'),
  skills: notYet(z.array(skillParam).max(20), 'skills', 'no Skills API'),
  system: z.string().max(100_000).nullish(),
  tools: z.array(toolParam).max(128),
  /** Corral: the largest reply the model may write per request (default 8192). */
  max_tokens: z.number().int().min(1).max(1_000_000).nullish(),
  /** Corral: the model's context window; older tool results are elided from requests to fit it. */
  context_window_tokens: z.number().int().min(1024).max(10_000_000).nullish(),
};

export const agentCreateBody = z
  .object({
    name: z.string().min(1).max(256),
    model: modelParam,
    ...agentFields,
    mcp_servers: agentFields.mcp_servers.optional(),
    skills: agentFields.skills.optional(),
    tools: agentFields.tools.optional(),
    metadata: metadata.optional(),
  })
  .strict();

export const agentUpdateBody = z
  .object({
    name: z.string().min(1).max(256).optional(),
    model: modelParam.optional(),
    ...agentFields,
    mcp_servers: agentFields.mcp_servers.nullish(),
    skills: agentFields.skills.nullish(),
    tools: agentFields.tools.nullish(),
    metadata: metadataPatch.nullish(),
    version: z.number().int().min(1).optional(),
  })
  .strict();

export type AgentCreateBody = z.infer<typeof agentCreateBody>;
export type AgentUpdateBody = z.infer<typeof agentUpdateBody>;
