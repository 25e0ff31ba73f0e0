import crypto from 'node:crypto';
import type { EnvironmentStore } from '../../catalog/environments';
import type { EnvironmentKeyRow, WorkRow, WorkStore } from '../../catalog/work';
import type { Logger } from '../../logging/logger';
import type { SessionLog } from '../../session/store';
import type { EnvironmentKeyVault, KeyCredentialRef } from './key-vault';

/** Who presented a credential other than the server's API key. */
export type WorkPrincipal =
  | { kind: 'environment_key'; environmentId: string; keyId: string }
  | { kind: 'work_secret'; environmentId: string; workId: string; sessionId: string | null };

/** Options of the dial-in service. */
export interface DialInOptions {
  work: WorkStore;
  log: SessionLog;
  environments: EnvironmentStore;
  logger?: Logger;
  /** A lease's length when a heartbeat asks for none (seconds; default `CORRAL_WORK_LEASE_TTL_S` or 60). */
  leaseTtlS?: number;
  /** Where keys' values are kept (the vault); without it only their digests are. */
  keyVault?: EnvironmentKeyVault;
}

/** Shortest and longest lease a heartbeat may ask for (`desired_ttl_seconds`). */
export const MIN_TTL_S = 1;
export const MAX_TTL_S = 3600;
/** Unacknowledged items are handed out again after this long (the API's default). */
export const DEFAULT_RECLAIM_MS = 5000;
/** "Workers polling" counts workers seen this recently (the API's 30 s). */
const RECENT_POLL_MS = 30_000;

const digest = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** The credential prefix of environment keys and of per-item sessions tokens (they are told apart by it). */
export const ENV_KEY_PREFIX = 'corral-envkey-';
export const SESSIONS_TOKEN_PREFIX = 'corral-wst-';

/**
 * The host's side of the self-hosted worker protocol: environment keys, the work queue of
 * `self_hosted` environments, leases and per-item secrets. Machines that dial in run the SDK's
 * `EnvironmentWorker` against the HTTP routes that call this. Everything is synchronous SQLite
 * but the long poll, which waits on an in-memory signal rather than polling the database.
 */
export class DialIn {
  readonly leaseTtlS: number;
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(private readonly opts: DialInOptions) {
    const fromEnv = Number(process.env.CORRAL_WORK_LEASE_TTL_S);
    this.leaseTtlS = opts.leaseTtlS ?? (Number.isInteger(fromEnv) && fromEnv >= MIN_TTL_S ? fromEnv : 60);
  }

  get log(): SessionLog {
    return this.opts.log;
  }

  get work(): WorkStore {
    return this.opts.work;
  }

  /** True when the environment exists and is `self_hosted`. */
  isSelfHosted(environmentId: string): boolean {
    return (this.opts.environments.get(environmentId)?.record.config as { type?: string } | undefined)?.type === 'self_hosted';
  }

  /**
   * Makes a key for the environment. The value is returned here once; the host keeps its digest
   * (to compare) and the vault its value (an `environment_key` credential, write-only). When the
   * vault cannot take it, no key is made.
   */
  async createKey(environmentId: string, name: string | null): Promise<EnvironmentKeyRow & { key: string }> {
    const key = `${ENV_KEY_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
    const row = this.opts.work.addKey(environmentId, digest(key), name);
    if (this.opts.keyVault) {
      try {
        const ref = await this.opts.keyVault.store({ environmentId, keyId: row.id, name, key });
        this.opts.work.setKeyCredential(row.id, ref.vaultId, ref.credentialId);
      } catch (err) {
        this.opts.work.deleteKey(row.id);
        throw err;
      }
    }
    return { ...this.opts.work.key(row.id)!, key };
  }

  /** Revokes a key: it stops working at once, and its vault credential is archived. */
  revokeKey(id: string): EnvironmentKeyRow | undefined {
    const k = this.opts.work.revokeKey(id);
    const ref = k && refOf(k);
    if (ref) this.opts.keyVault?.archive(ref);
    return k;
  }

  /** The environment's keys, newest state: a key whose credential was archived or deleted in the vault is revoked. */
  keys(environmentId: string): EnvironmentKeyRow[] {
    return this.opts.work.keys(environmentId).map((k) => (k.revoked_at || this.keyLive(k) ? k : this.opts.work.revokeKey(k.id)!));
  }

  /** A key whose value the vault keeps works only while that credential is live (archived or deleted there: revoked). */
  private keyLive(k: EnvironmentKeyRow): boolean {
    const ref = refOf(k);
    return !ref || !this.opts.keyVault || this.opts.keyVault.isLive(ref);
  }

  /** Records a use of a key (in the session's log when it served one). */
  private keyUsed(keyId: string, sessionId: string | undefined, target: string): void {
    const k = this.opts.work.key(keyId);
    const ref = k && refOf(k);
    if (ref) this.opts.keyVault?.recordUse(ref, k.environment_id, sessionId, target);
  }

  /** Who a presented credential belongs to (undefined: nobody). */
  principal(presented: string | undefined): WorkPrincipal | undefined {
    if (!presented) return undefined;
    if (presented.startsWith(ENV_KEY_PREFIX)) {
      const k = this.opts.work.keyByDigest(digest(presented));
      if (!k) return undefined;
      if (!this.keyLive(k)) {
        this.opts.work.revokeKey(k.id);
        return undefined;
      }
      this.opts.work.touchKey(k.id);
      this.keyUsed(k.id, undefined, `environment ${k.environment_id}`);
      return { kind: 'environment_key', environmentId: k.environment_id, keyId: k.id };
    }
    if (presented.startsWith(SESSIONS_TOKEN_PREFIX)) {
      const w = this.opts.work.bySecretDigest(digest(presented));
      if (!w) return undefined;
      return { kind: 'work_secret', environmentId: w.environment_id, workId: w.id, sessionId: w.session_id };
    }
    return undefined;
  }

  /** Queues an item (a session's, or a health check) and wakes the environment's long polls. */
  enqueue(environmentId: string, sessionId: string | null, type: WorkRow['data_type'], hand: string | null = null): WorkRow {
    const row = this.opts.work.create(environmentId, sessionId, type, hand);
    // The timeline shows the hand waiting for a machine to dial in, as it shows any provisioning.
    if (sessionId && hand) this.opts.log.emitEvent(sessionId, { type: 'hand.provisioning', hand, kind: 'self_hosted', work_id: row.id });
    const waiters = this.waiting.get(environmentId);
    if (waiters) for (const w of [...waiters]) w();
    return row;
  }

  /**
   * Claims the next item for a poller, waiting up to `blockMs` for one. The item carries a fresh
   * secret whose sessions token works for that item and its session only.
   */
  async poll(environmentId: string, o: { blockMs: number; reclaimMs: number; workerId: string | null; signal?: AbortSignal; keyId?: string }): Promise<{ row: WorkRow; secret: string } | undefined> {
    if (o.workerId) this.opts.work.notePoll(environmentId, o.workerId, Date.now());
    const deadline = Date.now() + o.blockMs;
    for (;;) {
      this.expireLeases();
      const token = `${SESSIONS_TOKEN_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
      const row = this.opts.work.claim(environmentId, Date.now(), o.reclaimMs, o.workerId, digest(token));
      if (row) {
        // The ledger: the key fetched this session's work (the session's log says which key, never its value).
        if (row.session_id && o.keyId) this.keyUsed(o.keyId, row.session_id, `work item ${row.id} of environment ${environmentId}${o.workerId ? ` (worker ${o.workerId})` : ''}`);
        return { row, secret: Buffer.from(JSON.stringify({ sessions_token: token })).toString('base64url') };
      }
      const left = deadline - Date.now();
      if (left <= 0 || o.signal?.aborted) return undefined;
      await this.waitForQueue(environmentId, left, o.signal);
    }
  }

  private waitForQueue(environmentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiting.get(environmentId);
      if (!set) this.waiting.set(environmentId, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set!.delete(done);
        if (set!.size === 0) this.waiting.delete(environmentId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  /** queued → starting, and the session's hand is ready (the timeline shows the worker). */
  ack(row: WorkRow): boolean {
    if (!this.opts.work.ack(row.id, Date.now(), this.leaseTtlS)) return false;
    if (row.session_id && this.opts.log.findSession(row.session_id)) {
      this.opts.log.emitEvent(row.session_id, {
        type: 'hand.ready',
        hand: row.hand ?? 'main',
        kind: 'self_hosted',
        duration_ms: Math.max(0, Date.now() - Date.parse(row.created_at)),
        description: `a machine that dialled in (self-hosted worker${row.worker_id ? ` ${row.worker_id}` : ''}, work item ${row.id})`,
        work_id: row.id,
        ...(row.worker_id ? { worker_id: row.worker_id } : {}),
      });
    }
    return true;
  }

  /** A lease's length for a heartbeat that asked for `desired` seconds (clamped). */
  ttlFor(desired: number | undefined): number {
    return desired === undefined ? this.leaseTtlS : Math.min(MAX_TTL_S, Math.max(MIN_TTL_S, desired));
  }

  /** Stops items whose worker stopped heartbeating, and says so in their sessions' logs. */
  expireLeases(): WorkRow[] {
    const gone = this.opts.work.expireLeases(Date.now());
    for (const row of gone) {
      this.opts.logger?.warn({ work_id: row.id, session_id: row.session_id, worker_id: row.worker_id }, 'self-hosted worker lost its lease');
      if (row.session_id && this.opts.log.findSession(row.session_id)) {
        this.opts.log.emitEvent(row.session_id, { type: 'hand.lost', hand: row.hand ?? 'main', reason: `the worker stopped heartbeating: the lease of work item ${row.id} (${row.lease_ttl_s ?? this.leaseTtlS} s) ran out`, work_id: row.id });
      }
    }
    return gone;
  }

  stats(environmentId: string): { depth: number; pending: number; oldest: string | null; workers: number } {
    this.expireLeases();
    return this.opts.work.stats(environmentId, Date.now(), RECENT_POLL_MS);
  }
}

const refOf = (k: EnvironmentKeyRow): KeyCredentialRef | undefined => (k.vault_id && k.credential_id ? { vaultId: k.vault_id, credentialId: k.credential_id } : undefined);
