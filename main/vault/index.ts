/**
 * The vault as the host composes it: the store and key, the model proxy brains call, the
 * registration that gives each brain a capability instead of a key, and the redacting views
 * of the log and the hands that brains and hands write through.
 */
import type { Database } from 'better-sqlite3';
import type { SessionLog } from '../session/store';
import type { EventInput, LoggedEvent } from '../session/types';
import { registerBrainEnvProvider } from './brain-env';
import { caVariables, type HandEnvSource } from '../hands/hand-env';
import type { VaultKeyWrapper } from './keys';
import { EgressProxy, type EgressOptions } from './egress-proxy';
import { GitProxy } from './git-proxy';
import { ProxyCapabilities } from './proxy-caps';
import { ModelKeyCache } from './model-key-cache';
import { ModelProxy } from './model-proxy';
import { Vault } from './vault';
import { sshKeysFor } from './ssh-keys';
import { sandboxNetFor } from './sandbox-net';

export { Vault } from './vault';
export type { VaultKeyWrapper } from './keys';

export interface HostVault {
  vault: Vault;
  modelProxy: ModelProxy;
  /** Git smart-HTTP to repositories with a token in a session's vaults (the hands' remotes point at it). */
  gitProxy: GitProxy;
  /** The hands' HTTP proxy that swaps environment_variable placeholders for values on allowed hosts. */
  egressProxy: EgressProxy;
  /** The variables a session's hands get: placeholders and the egress proxy (hands/hand-env.ts). */
  handEnv: HandEnvSource;
  /** Voids a session's git and egress capabilities for good (recorded in the data folder). */
  revokeProxies(sessionId: string): Promise<void>;
  /** Settles when both the key is open and the proxy listens (rejects if the key cannot be had). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface HostVaultOptions {
  db: Database;
  log: SessionLog;
  dataDir: string;
  passphrase?: string;
  keyWrapper?: VaultKeyWrapper;
  /** Where the model-key fallback is read (default process.env): `serve` passes the keys it took out of its environment. */
  env?: NodeJS.ProcessEnv;
  /** The model API's base URL, read per request; default `ANTHROPIC_BASE_URL`, else https://api.anthropic.com. */
  upstream?: () => string;
  /** The egress proxy's trust of upstreams and loopback targets (tests); its CA lives in `dataDir`. */
  egress?: Omit<EgressOptions, 'dataDir'>;
  /**
   * How a tool's result fills a request a brain sent ahead (the brain's own rendering, given by
   * the host: the vault does not import the brain); without it such requests go unsent.
   */
  heldFill?: { render(e: LoggedEvent): string | undefined; userTurnTypes: ReadonlySet<string> };
}

export function startHostVault(opts: HostVaultOptions): HostVault {
  const vault = new Vault({ db: opts.db, log: opts.log, dataDir: opts.dataDir, passphrase: opts.passphrase, keyWrapper: opts.keyWrapper, ...(opts.env ? { env: opts.env } : {}) });
  // The key is looked up once per session until the vault or the session's record changes.
  const modelKeys = new ModelKeyCache(vault, opts.log);
  const fill = opts.heldFill;
  const held = fill && {
    render: fill.render,
    userTurn: (e: LoggedEvent) => fill.userTurnTypes.has(e.type),
    // The events after a held request's position are few (the rest of the reply, a hand's
    // events): more than a page of them and the request is let go rather than searched for.
    nextAfter: (sessionId: string, seq: number) => {
      const page = opts.log.getEvents(sessionId, { after: seq, limit: 64 });
      return page.find((e) => fill.userTurnTypes.has(e.type)) ?? (page.length === 64 ? page.at(-1) : undefined);
    },
  };
  const modelProxy = new ModelProxy({ keys: modelKeys, upstream: opts.upstream, ...(held ? { held } : {}) });
  // Synchronously, as each event is logged: a held request leaves as its result is committed.
  const unheld = modelProxy.held ? opts.log.subscribeAll(({ sessionId, event }) => modelProxy.held!.logged(sessionId, event)) : () => {};
  // One set of capabilities for both proxies; a session that ended (deleted, archived) has none.
  const alive = (id: string) => {
    const s = opts.log.findSession(id);
    return s !== undefined && !s.archived_at;
  };
  const caps = new ProxyCapabilities(opts.dataDir, alive);
  const gitProxy = new GitProxy(vault, opts.dataDir, caps);
  const egressProxy = new EgressProxy(vault, { ...opts.egress, dataDir: opts.dataDir, sealer: vault, caps });
  void Promise.all([modelProxy.listening, gitProxy.listening, egressProxy.listening]).then(() => {
    egressProxy.protect(gitProxy.port);
    egressProxy.protect(Number(new URL(modelProxy.url ?? 'http://x:0').port) || undefined);
  }, () => {});
  const gateway = sandboxNetFor({ vault, gitProxy, egressProxy });
  // A session that ends loses its sandbox gateway names at once (its capabilities die with it anyway).
  const unwatch = opts.log.subscribeSessions((c) => void (c.kind !== 'created' && !alive(c.sessionId) && gateway.revoke(c.sessionId)));
  const handEnv: HandEnvSource = {
    sandboxNet: gateway.sandboxNet,
    sshKeys: async (sessionId, host) =>
      (await sshKeysFor(vault, sessionId, host)).map((c) => ({
        name: `${c.credential.display_name ? `'${c.credential.display_name}' ` : ''}(${c.credential.id})`,
        id: c.credential.id,
        privateKey: c.secret.private_key,
        passphrase: c.secret.passphrase,
        used: (target: string) => c.recordUse(target),
      })),
    envFor: async (sessionId, reach, placeCa) => {
      const placeholders = await vault.environmentPlaceholders(sessionId);
      if (Object.keys(placeholders).length === 0) return {};
      await egressProxy.listening;
      const at = await reach(egressProxy.port!).catch(() => undefined);
      if (!at) return placeholders;
      const url = await egressProxy.proxyUrl(sessionId, at);
      const proxy = { ...placeholders, HTTP_PROXY: url, http_proxy: url, HTTPS_PROXY: url, https_proxy: url };
      // The CA that signs the proxy's certificates for allowed HTTPS hosts; without it on the
      // hand HTTPS still works, tunnelled, with the placeholders unsubstituted.
      const ca = egressProxy.ca;
      const files = ca && (await (placeCa ? ca.certPem().then(placeCa) : ca.localFiles()).catch(() => undefined));
      return files ? { ...proxy, ...caVariables(files) } : proxy;
    },
  };
  const unregister = registerBrainEnvProvider({
    envFor: (sessionId) => {
      const url = modelProxy.url;
      if (!url || !opts.log.findSession(sessionId)) return undefined;
      const cap = modelProxy.mint(sessionId);
      return { env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: cap.token }, release: cap.revoke };
    },
  });
  const ready = Promise.all([vault.ready, modelProxy.listening, gitProxy.listening]).then(() => undefined);
  ready.catch(() => {});
  return {
    vault,
    modelProxy,
    gitProxy,
    egressProxy,
    handEnv,
    ready,
    revokeProxies: async (sessionId) => {
      gateway.revoke(sessionId);
      await caps.revoke(sessionId);
    },
    close: async () => {
      unregister();
      unwatch();
      unheld();
      modelKeys.close();
      gateway.close();
      vault.close();
      await Promise.all([modelProxy.close(), gitProxy.close(), egressProxy.close()]);
    },
  };
}

/**
 * Binds every function of `target` to it (so the view never holds state of its own) and
 * replaces the named ones.
 */
function view<T extends object>(target: T, overrides: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return overrides[prop as keyof T];
      const v = Reflect.get(t, prop, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/** The log as brains and hands write to it: every appended event has the vault's values redacted. */
export function redactingLog(log: SessionLog, vault: Vault): SessionLog {
  return view(log, {
    emitEvent: (sessionId: string, event: EventInput, o?: Parameters<SessionLog['emitEvent']>[2]) => {
      vault.flushLive(sessionId, [event]);
      return log.emitEvent(sessionId, vault.redactEvent(event), o);
    },
    emitEvents: (sessionId: string, events: readonly EventInput[], key?: string) => {
      vault.flushLive(sessionId, events);
      return log.emitEvents(sessionId, events.map((e) => vault.redactEvent(e)), key);
    },
    emitEventGroups: (sessionId: string, groups: Parameters<SessionLog['emitEventGroups']>[1]) => {
      for (const g of groups) vault.flushLive(sessionId, g.events);
      return log.emitEventGroups(sessionId, groups.map((g) => ({ ...g, events: g.events.map((e) => vault.redactEvent(e)) })));
    },
  });
}

/** Hands as the supervisor calls them: a tool's output is redacted before it reaches the brain. */
export function redactingHands<H extends { execute(...args: any[]): Promise<unknown> }>(hands: H, vault: Vault): H {
  return view(hands, {
    execute: async (...args: unknown[]) => vault.redactor.redactValue(await (hands.execute as (...a: unknown[]) => Promise<unknown>)(...args)),
  } as Partial<Record<keyof H, unknown>>);
}
