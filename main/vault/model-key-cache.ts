/**
 * The model proxy's key lookups, remembered per session. Without it every model request (each
 * tool round trip) read the session's record and the vault's rows again, and decrypted the
 * credential's value: about 0.1 ms and a burst of short-lived objects in the host, per request,
 * for an answer that changes only when the vault or the session's record does.
 *
 * A remembered key is used only while nothing it was read from has changed: the vault's write
 * counter (every vault, credential and setting write, and the key opening), the session's record
 * (any change to it, told by the log), and the environment's key variables (read at each use,
 * since the fallback reads them live). A failed lookup (a locked vault) is not remembered.
 */
import type { SessionChange } from '../session/store';
import type { ModelKeySource } from './model-proxy';
import type { ModelKey } from './vault-types';

/** What the cache reads: the vault's lookup and what tells it that lookup may change. */
export interface ModelKeyOrigin extends ModelKeySource {
  /** Changes whenever anything a resolution reads in the vault may have changed. */
  readonly resolutionGeneration: number;
  /** Where the environment fallback is read. */
  readonly keyEnvironment: NodeJS.ProcessEnv;
}

interface Entry {
  generation: number;
  session: number;
  apiKey: string | undefined;
  authToken: string | undefined;
  key: ModelKey | undefined;
}

export class ModelKeyCache implements ModelKeySource {
  private readonly entries = new Map<string, Entry>();
  /** Per session, how many changes of its record have been told (guards lookups in flight). */
  private readonly sessionChanges = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly origin: ModelKeyOrigin,
    sessions: { subscribeSessions(listener: (change: SessionChange) => void): () => void },
  ) {
    this.unsubscribe = sessions.subscribeSessions((c) => {
      this.entries.delete(c.sessionId);
      if (c.kind === 'deleted') this.sessionChanges.delete(c.sessionId);
      else this.sessionChanges.set(c.sessionId, (this.sessionChanges.get(c.sessionId) ?? 0) + 1);
    });
  }

  async modelKey(sessionId: string): Promise<ModelKey | undefined> {
    const env = this.origin.keyEnvironment;
    const now = { generation: this.origin.resolutionGeneration, session: this.sessionChanges.get(sessionId) ?? 0, apiKey: env.ANTHROPIC_API_KEY, authToken: env.ANTHROPIC_AUTH_TOKEN };
    const hit = this.entries.get(sessionId);
    if (hit && hit.generation === now.generation && hit.session === now.session && hit.apiKey === now.apiKey && hit.authToken === now.authToken) return hit.key;
    const key = await this.origin.modelKey(sessionId);
    // Remembered as of when the lookup began: a change during it makes the next call look again.
    this.entries.set(sessionId, { ...now, key });
    return key;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
    this.sessionChanges.clear();
  }
}
