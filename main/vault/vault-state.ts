/**
 * The vault's keys and state: the key opened at start (key file, passphrase or the OS keychain,
 * keys.ts), every credential's values held in memory for redaction, sealing and opening values
 * with the key, and the redaction of what brains and hands produce (events, live text). The
 * credentials themselves (vaults, CRUD, resolution for the proxies) are vault.ts, built on this.
 */
import type { EventInput } from '../session/types';
import { open, seal } from './crypto';
import { secretValues, type AnySecret, type CredentialKind } from './kinds';
import { unlockKey, type KeyMode } from './keys';
import { LiveRedaction, type LiveDeltaLike } from './live-redaction';
import { Redactor, type SecretEntry } from './redact';
import { VaultStore, type CredentialRow } from './store';
import { aadOf, hostSecrets, labelOf, VaultLockedError, type VaultOptions } from './vault-types';

type Values = { label: string; values: string[] };

export class VaultState {
  /** Settles when the key is open (rejects with the reason it could not be). */
  readonly ready: Promise<void>;
  protected readonly store: VaultStore;
  private key?: Buffer;
  private keyInfo?: { mode: KeyMode; description: string };
  private lockError?: Error;
  protected readonly values = new Map<string, Values>();
  private redactorCache?: { redactor: Redactor; version: number; env: string };
  protected version = 0;
  private readonly live: LiveRedaction;

  constructor(protected readonly opts: VaultOptions) {
    this.store = new VaultStore(opts.db);
    this.ready = this.unlock();
    this.ready.catch(() => {}); // the reason is kept and reported to every caller that needs the key
    this.live = new LiveRedaction(opts.log, () => this.redactor);
  }

  private async unlock(): Promise<void> {
    try {
      const got = await unlockKey(this.store, { dataDir: this.opts.dataDir, passphrase: this.opts.passphrase, wrapper: this.opts.keyWrapper });
      this.key = got.key;
      this.keyInfo = { mode: got.mode, description: got.description };
      for (const row of this.store.allCredentials()) {
        try {
          this.values.set(row.id, { label: labelOf(row), values: secretValues(row.kind as CredentialKind, this.openSecret(row)) });
        } catch (err) {
          // One damaged row does not lock the rest; using it fails with the reason.
          console.warn(`corral: vault: credential ${row.id} cannot be opened (${(err as Error).message})`);
        }
      }
      this.version++;
    } catch (err) {
      this.lockError = err instanceof Error ? err : new Error(String(err));
      throw this.lockError;
    }
  }

  /** How the key is had (for the start-up message), once open. */
  get keySource(): { mode: KeyMode; description: string } | undefined {
    return this.keyInfo;
  }

  protected async needKey(): Promise<Buffer> {
    try {
      await this.ready;
    } catch {
      // reported below
    }
    if (!this.key) throw new VaultLockedError(`the vault is locked: ${this.lockError?.message ?? 'its key is not open yet'}`);
    return this.key;
  }

  close(): void {
    this.live.close();
  }

  /**
   * Seals a value of the host's own (not a credential) with the vault's key, `aad` naming what
   * it is: the egress CA's private key is kept so (egress-ca.ts).
   */
  async sealOwn(plaintext: Buffer | string, aad: string): Promise<Buffer> {
    return seal(await this.needKey(), plaintext, aad);
  }

  /** Opens what `sealOwn` sealed under the same `aad`. */
  async openOwn(sealed: Buffer, aad: string): Promise<Buffer> {
    return open(await this.needKey(), sealed, aad);
  }

  // ---------------------------------------------------------------------------------------
  // Redaction

  /** The redactor of every value the vault holds (archived ones too), the host's model keys and the vault's passphrase. */
  get redactor(): Redactor {
    const envKey = hostSecrets(this.env);
    if (this.opts.passphrase && this.opts.passphrase.length >= 8) envKey.push({ label: 'CORRAL_VAULT_PASSPHRASE', values: [this.opts.passphrase] });
    const envSig = envKey.map((e) => e.values.join('\u0000')).join('\u0001');
    const c = this.redactorCache;
    if (c && c.version === this.version && c.env === envSig) return c.redactor;
    const entries: SecretEntry[] = [...this.values.values(), ...envKey];
    const redactor = new Redactor(entries);
    this.redactorCache = { redactor, version: this.version, env: envSig };
    return redactor;
  }

  redactText(text: string): string {
    return this.redactor.redact(text);
  }

  /** The event with every vault value in its strings replaced by a marker (the hook for whatever appends brain and hand events). */
  redactEvent<E extends EventInput>(event: E): E {
    return this.redactor.redactValue(event);
  }

  /**
   * Live text (event_start / event_delta) redacted across deltas: each event's text is held
   * back by (longest secret − 1) characters. Returns null for a delta with nothing to show yet.
   */
  redactDelta<D extends LiveDeltaLike>(sessionId: string, delta: D): D | null {
    return this.live.redactDelta(sessionId, delta);
  }

  /** Where the text held back from live deltas goes when its event is appended (the supervisor's live topic). */
  setLiveTailSink(sink: (sessionId: string, delta: LiveDeltaLike) => void): void {
    this.live.setLiveTailSink(sink);
  }

  /**
   * Events about to be appended end their live text: what was held back (redacted) is pushed
   * as a last delta, so the live text still adds up to the event's text, and before it.
   */
  flushLive(sessionId: string, events: readonly EventInput[]): void {
    this.live.flushLive(sessionId, events);
  }

  // ---------------------------------------------------------------------------------------

  protected get env(): NodeJS.ProcessEnv { return this.opts.env ?? process.env; }

  protected openSecret(row: CredentialRow): AnySecret {
    if (!this.key) throw new VaultLockedError('the vault is locked');
    return JSON.parse(open(this.key, row.secret, aadOf(row.vault_id, row.id)).toString('utf8')) as AnySecret;
  }

  protected remember(row: CredentialRow, secret: AnySecret | undefined): void {
    const values = secret ? secretValues(row.kind as CredentialKind, secret) : (this.values.get(row.id)?.values ?? []);
    this.values.set(row.id, { label: labelOf(row), values });
    this.version++;
  }

}
