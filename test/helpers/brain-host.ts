import { analyse, hasWork } from '../../main/brain/analyse';
import { createHost, type Host, type HostOptions } from '../../main/host';
import type { LoggedEvent } from '../../main/session/types';
import { startModelServer, type ModelServer, type Script } from '../fixtures/model-server';
import { tmpDir } from './tmp';

/** A host that runs real brain processes against a scripted model server. */
export interface BrainTestHost {
  host: Host;
  model: ModelServer;
  dataDir: string;
  /** A session of an agent with the built-in toolset, with a first user message (`record` adds to its record, e.g. vault_ids). */
  newSession(text?: string, agent?: Record<string, unknown>, record?: Record<string, unknown>): string;
  /** Resolves when the session is idle with nothing pending (its brain may linger). */
  settled(sessionId: string, timeoutMs?: number): Promise<LoggedEvent[]>;
  events(sessionId: string): LoggedEvent[];
  /** Stops the host (brains killed) without stopping the model server. */
  stopHost(): Promise<void>;
  /** A new host on the same data folder (as after a crash or a quit). */
  restartHost(): Promise<void>;
  close(): Promise<void>;
}

export async function startBrainHost(
  script: Script = [],
  opts: {
    retryBaseMs?: number;
    retries?: number;
    dataDir?: string;
    hostOptions?: Partial<HostOptions>;
    /** The only key the model server accepts (default: any). */
    requireModelKey?: string;
    /** The host's ANTHROPIC_API_KEY (default 'test-model-key'; null: unset). */
    envModelKey?: string | null;
  } = {},
): Promise<BrainTestHost> {
  const model = await startModelServer(script, { requireApiKey: opts.requireModelKey });
  // The host's model upstream and fallback key (brains get neither: they call the host's model proxy).
  process.env.ANTHROPIC_BASE_URL = model.url;
  if (opts.envModelKey === null) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = opts.envModelKey ?? 'test-model-key';
  process.env.CORRAL_RETRY_BASE_MS = String(opts.retryBaseMs ?? 20);
  process.env.CORRAL_RETRY_MAX_MS = '200';
  process.env.CORRAL_MODEL_RETRIES = String(opts.retries ?? 3);
  const dataDir = opts.dataDir ?? tmpDir();
  // Work folders in a scratch folder of their own (the default is beside the data folder).
  const workRoot = opts.hostOptions?.workRoot ?? tmpDir('corral-work-');
  let host = createHost({ dataDir, brains: true, ...opts.hostOptions, workRoot });
  const env = host.environments.create({ name: 'local', config: { type: 'local' }, metadata: {}, description: null });

  const t: BrainTestHost = {
    get host() {
      return host;
    },
    model,
    dataDir,
    newSession(text = 'hello', agentOverrides = {}, record = {}) {
      const agent = {
        type: 'agent',
        id: 'agent_test',
        version: 1,
        name: 'tester',
        model: { id: 'claude-test' },
        system: 'You are a test agent.',
        tools: [{ type: 'agent_toolset_20260401', configs: [], default_config: { enabled: true, permission_policy: { type: 'always_allow' } } }],
        ...agentOverrides,
      };
      const { session } = host.log.createSession(
        { environment_id: env.id, record: { agent, title: text.slice(0, 40), metadata: {}, resources: [], vault_ids: [], ...record } },
        [],
      );
      host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text }] });
      return session.id;
    },
    settled(sessionId, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const events = host.log.getEvents(sessionId, { limit: 100_000 });
          const a = analyse(events);
          if (!hasWork(a) && events.some((e) => e.type === 'session.status_idle')) {
            clearInterval(timer);
            clearTimeout(deadline);
            resolve(events);
          }
        };
        const timer = setInterval(check, 20);
        const deadline = setTimeout(() => {
          clearInterval(timer);
          const types = host.log.getEvents(sessionId, { limit: 100_000 }).map((e) => `${e.seq}:${e.type}`);
          reject(new Error(`session ${sessionId} did not settle in ${timeoutMs} ms; log: ${types.join(' ')}`));
        }, timeoutMs);
      });
    },
    events: (sessionId) => host.log.getEvents(sessionId, { limit: 100_000 }),
    async stopHost() {
      await host.close();
    },
    async restartHost() {
      host = createHost({ dataDir, brains: true, ...opts.hostOptions, workRoot });
    },
    async close() {
      await host.close().catch(() => {});
      await model.close();
    },
  };
  return t;
}

/** Text of an event's first content block. */
export const textOf = (e: LoggedEvent | undefined) => ((e?.content as { text?: string }[] | undefined)?.[0]?.text ?? '') as string;
