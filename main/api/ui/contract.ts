import { z } from 'zod';
import type { LiveDelta } from '../../brain/live-text';
import type { HandPoolState } from '../../hands/hand-pool';
import { agentCreateBody, agentUpdateBody } from '../http/schemas/agents';
import { environmentCreateBody, environmentUpdateBody } from '../http/schemas/environments';
import { eventParams, userMessageParams } from '../http/schemas/events';
import { attachBody } from '../http/schemas/hands';
import { sessionCreateBody, sessionForkBody } from '../http/schemas/sessions';
import { credentialCreateBody, credentialUpdateBody, vaultCreateBody } from '../http/schemas/vaults';
import type { UiCallName, UiStreamName } from './methods';
import { machineSchemas, type MachineCallOutputs } from './machines-contract';
import { workerSchemas, type WorkerStreamItems } from './workers-contract';
export type { UiWorkerSeen, UiWorkItem } from './workers-contract';
export type { Discovery, DroppedFileResult, DroppedSshHost, ProbeResult } from './machines-contract';

/**
 * The one contract for every renderer-facing call: name, zod input schema, output type.
 * Main validates every input against these schemas (IPC and WebSocket alike); the renderer
 * imports only the types.
 */

const sessionId = z.string().min(1).max(100);
const position = z.number().int().min(0);

/** Token usage, summed over `span.model_request_end` events. */
export interface UiUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** A hand a session holds now: its name, kind (environment type) and what it is. */
export interface UiHand {
  name: string;
  kind: string;
  description: string;
}

/** A session as the UI lists it. */
export interface SessionSummary {
  id: string;
  title: string | null;
  status: 'rescheduling' | 'running' | 'idle' | 'terminated';
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** Position of the newest event. */
  last_seq: number;
  agent_name: string | null;
  parent_id: string | null;
  fork_seq: number | null;
  agent_id: string | null;
  environment_id: string | null;
  /** Tokens used so far. */
  usage: UiUsage;
  /** The hands it holds (present when the host can tell). */
  hands?: UiHand[];
  /** Idle with tool calls waiting for the user (`requires_action`); present when the host can tell. */
  waiting_for_user?: boolean;
}

/** A toolset or custom tool of an agent, as the API stores it (defaults filled in). */
export interface UiToolset {
  type: string;
  name?: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  default_config?: { enabled?: boolean; permission_policy?: { type: string } };
  configs?: { name: string; enabled?: boolean; permission_policy?: { type: string } }[];
  [field: string]: unknown;
}

/** An agent (its current version), as the API's agent object. */
export interface UiAgent {
  id: string;
  version: number;
  name: string;
  description: string | null;
  model: { id: string; [field: string]: unknown };
  system: string | null;
  tools: UiToolset[];
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

/** An environment key just made (`key` is shown this once; the host keeps only its digest). */
export interface UiWorkerKey {
  id: string;
  environment_id: string;
  name: string | null;
  created_at: string;
  key: string;
}

/** An environment, as the API's environment object. */
export interface UiEnvironment {
  id: string;
  name: string;
  description: string | null;
  config: { type: string; [field: string]: unknown };
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  /** Its warm pool of hands made ahead, when the host keeps one for it (CORRAL_HAND_POOL), as listed. */
  corral_pool?: UiHandPool;
  [field: string]: unknown;
}

/**
 * One environment's warm pool of hands, as an environment of the list carries it. Its figures are
 * the pool's own type (hands/hand-pool.ts HandPoolState), defined there once.
 */
export type UiHandPool = Omit<HandPoolState, 'environment_id' | 'name'>;

/** A warm pool's state with its environment's id: an item of watchHandPools lists every pool (the name is left out). */
export type UiHandPoolState = Omit<HandPoolState, 'name'>;

/** The Messages request the brain would build from a session's log up to a position. */
export interface ModelRequestView {
  session_id: string;
  /** The position asked for; the request includes events 1..at_seq. */
  at_seq: number;
  /** The last position the request includes (as `span.model_request_start.context_seq`). */
  context_seq: number;
  params: {
    model: string;
    max_tokens: number;
    system?: { type: string; text?: string; [k: string]: unknown }[];
    tools?: { name: string; description: string; input_schema: Record<string, unknown>; [k: string]: unknown }[];
    messages: { role: 'user' | 'assistant'; content: { type: string; [k: string]: unknown }[] }[];
  };
  /** Tool results elided from the request to fit the context window (never from the log). */
  elided_seqs: number[];
  /** Set when the oldest turns were dropped to fit the window: events 1 to this one are not in the request. */
  dropped_through?: number;
  estimated_tokens: number;
  /** How the tool list was made (which hands it names). */
  note: string;
}

/** What forking at a position keeps, and what will run again once the fork gets work. */
export interface ForkPreview {
  at_seq: number;
  /** Status the session had at that position. */
  status_at: 'rescheduling' | 'running' | 'idle' | 'terminated';
  /** Plain sentences, in the order things happen. */
  will_run: string[];
  /** Tool calls at the fork point without a result: answered "outcome unknown", never re-run. */
  unanswered_tool_calls: { id: string; name: string; seq: number }[];
  /** A model request was in flight at that point: it is closed and sent again. */
  open_request: boolean;
  /** The model is asked again even without a new message. */
  needs_model: boolean;
}

/** A piece of a tool call's full output (the host keeps outputs longer than the model's cap). */
export interface FullOutputChunk {
  file: string;
  text: string;
  /** Byte offset of `text` in the file, and where the next piece starts (null: the end). */
  offset: number;
  next_offset: number | null;
  total_bytes: number;
}

/** An event as the UI sees it: the log's event (Managed Agents shape plus `seq`). */
export interface UiEvent {
  id: string;
  type: string;
  processed_at: string;
  seq: number;
  [field: string]: unknown;
}

/** A credential as the vault panel shows it: name, kind, scope and last use, never a value. */
export interface UiCredential {
  id: string;
  vault_id: string;
  display_name: string | null;
  /** The kind and its public fields (`type`, `mcp_server_url`, hosts, …); no secret is ever here. */
  auth: { type: string; [field: string]: unknown };
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  last_used_at: string | null;
}

/** A vault and its credentials. */
export interface UiVault {
  id: string;
  display_name: string;
  is_default: boolean;
  created_at: string;
  archived_at: string | null;
  credentials: UiCredential[];
}

/** A change to the session list. */
export interface SessionListChange {
  kind: 'created' | 'updated' | 'deleted';
  session: SessionSummary | null;
  sessionId: string;
}

export const uiSchemas = {
  listSessions: z.object({ limit: z.number().int().min(1).max(1000).optional(), includeArchived: z.boolean().optional() }).strict(),
  getSession: z.object({ sessionId }).strict(),
  getEvents: z
    .object({
      sessionId,
      after: position.optional(),
      before: position.optional(),
      from: position.optional(),
      to: position.optional(),
      types: z.array(z.string().min(1).max(100)).max(100).optional(),
      order: z.enum(['asc', 'desc']).optional(),
      limit: z.number().int().min(1).max(5000).optional(),
    })
    .strict(),
  sendMessage: z.object({ sessionId, text: z.string().min(1).max(1_000_000) }).strict(),
  watchSessions: z.object({}).strict(),
  /** Events after `after` (default: from the start), then each new one as it is committed. */
  watchEvents: z.object({ sessionId, after: position.optional() }).strict(),
  /** Text the model is writing now (not logged): shown until its event arrives via watchEvents. */
  watchLiveText: z.object({ sessionId }).strict(),
  /** Every warm pool of hands as it is now, then again at each change (none kept: one empty list). */
  watchHandPools: z.object({}).strict(),
  // ---- host calls: every body is checked by the schema the HTTP API uses for the same thing ----
  listAgents: z.object({ includeArchived: z.boolean().optional() }).strict(),
  createAgent: agentCreateBody,
  updateAgent: z.object({ agentId: z.string().min(1).max(100), update: agentUpdateBody }).strict(),
  archiveAgent: z.object({ agentId: z.string().min(1).max(100) }).strict(),
  listEnvironments: z.object({ includeArchived: z.boolean().optional() }).strict(),
  createEnvironment: environmentCreateBody,
  updateEnvironment: z.object({ environmentId: z.string().min(1).max(100), update: environmentUpdateBody }).strict(),
  archiveEnvironment: z.object({ environmentId: z.string().min(1).max(100) }).strict(),
  /** A session as `POST /v1/sessions` makes it, plus hands of other environments attached at once. */
  createSession: z.object({ session: sessionCreateBody, hands: z.array(attachBody).max(16).optional() }).strict(),
  /** Any event a client may send (`POST /v1/sessions/{id}/events`): a message, an interrupt, … */
  sendEvent: z.object({ sessionId, event: eventParams }).strict(),
  listHands: z.object({ sessionId }).strict(),
  /** Sessions forked from this one, oldest first. */
  listForks: z.object({ sessionId }).strict(),
  getModelRequest: z.object({ sessionId, atSeq: position }).strict(),
  previewFork: z.object({ sessionId, atSeq: position, withMessage: z.boolean().optional() }).strict(),
  /**
   * `POST /v1/sessions/{id}/fork`'s body, plus Corral's fork options: another environment for
   * the main hand, more hands attached, and a first message.
   */
  forkSession: z
    .object({
      sessionId,
      fork: sessionForkBody,
      environmentId: z.string().min(1).max(100).optional(),
      hands: z.array(attachBody).max(16).optional(),
      message: userMessageParams.optional(),
    })
    .strict(),
  /** A piece of the full output kept for the tool result at `seq` (up to 4 MiB at a time). */
  readFullOutput: z.object({ sessionId, seq: position, offset: position.optional(), length: z.number().int().min(1).max(4 * 1024 * 1024).optional() }).strict(),
  // ---- the vault: values go in (create, rotate) and never come back ----
  listVaults: z.object({ includeArchived: z.boolean().optional() }).strict(),
  createVault: vaultCreateBody,
  createCredential: z.object({ vaultId: z.string().min(1).max(100), credential: credentialCreateBody }).strict(),
  /** A new value (rotation), name or scope: `POST /v1/vaults/{id}/credentials/{cid}`'s body. */
  updateCredential: z.object({ vaultId: z.string().min(1).max(100), credentialId: z.string().min(1).max(100), update: credentialUpdateBody }).strict(),
  archiveCredential: z.object({ vaultId: z.string().min(1).max(100), credentialId: z.string().min(1).max(100) }).strict(),
  deleteCredential: z.object({ vaultId: z.string().min(1).max(100), credentialId: z.string().min(1).max(100) }).strict(),
  /** A key for machines that dial in to a self_hosted environment: in the reply once, never again. */
  createWorkerKey: z.object({ environmentId: z.string().min(1).max(100), name: z.string().min(1).max(256).optional() }).strict(),
  // ---- the hands panel: machines by drag and drop (machines-contract.ts) ----
  ...machineSchemas,
  // ---- machines that dial in, live (workers-contract.ts) ----
  ...workerSchemas,
} satisfies Record<UiCallName | UiStreamName, z.ZodType>;

export type UiInput<N extends UiCallName | UiStreamName> = z.input<(typeof uiSchemas)[N]>;

/** Output of each call. */
export interface UiCallOutputs extends MachineCallOutputs {
  listSessions: SessionSummary[];
  getSession: SessionSummary;
  getEvents: UiEvent[];
  sendMessage: UiEvent;
  listAgents: UiAgent[];
  createAgent: UiAgent;
  updateAgent: UiAgent;
  archiveAgent: UiAgent;
  listEnvironments: UiEnvironment[];
  createEnvironment: UiEnvironment;
  updateEnvironment: UiEnvironment;
  archiveEnvironment: UiEnvironment;
  createSession: SessionSummary;
  sendEvent: UiEvent;
  listHands: UiHand[];
  listForks: SessionSummary[];
  getModelRequest: ModelRequestView;
  previewFork: ForkPreview;
  forkSession: SessionSummary;
  readFullOutput: FullOutputChunk;
  listVaults: UiVault[];
  createVault: UiVault;
  createCredential: UiCredential;
  updateCredential: UiCredential;
  archiveCredential: UiCredential;
  deleteCredential: { id: string; deleted: true };
  createWorkerKey: UiWorkerKey;
}

/** Live text of an event not logged yet (the Managed Agents event_start / event_delta shapes). */
export type LiveTextItem = LiveDelta;

/** Item type of each stream. */
export interface UiStreamItems extends WorkerStreamItems {
  watchSessions: SessionListChange;
  watchEvents: UiEvent;
  watchLiveText: LiveTextItem;
  watchHandPools: UiHandPoolState[];
}

/** An error as it crosses to the renderer: a kind the UI can branch on, and a message. */
export interface UiError {
  kind: 'invalid_input' | 'not_found' | 'internal';
  message: string;
}

/** The API the renderer holds, whichever transport (IPC in the app, WebSocket in a browser). */
export type CorralApi = {
  [N in UiCallName]: (input: UiInput<N>) => Promise<UiCallOutputs[N]>;
} & {
  [N in UiStreamName]: (input: UiInput<N>, onItem: (item: UiStreamItems[N]) => void, onError?: (error: UiError) => void) => () => void;
};
