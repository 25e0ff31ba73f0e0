/** Where an environment key's value is kept in the vault. */
export interface KeyCredentialRef {
  vaultId: string;
  credentialId: string;
}

/**
 * What the dial-in service needs of the vault for environment keys (implemented by
 * `vault/environment-keys.ts`, wired in host.ts; hands do not import the vault). A key's value is
 * stored as an `environment_key` credential, write-only like every vault value; the work store
 * keeps its digest for comparison and where the credential is.
 */
export interface EnvironmentKeyVault {
  /** Stores a new key's value; rejects (and nothing is kept) when the vault cannot take it. */
  store(o: { environmentId: string; keyId: string; name: string | null; key: string }): Promise<KeyCredentialRef>;
  /** False once the credential is archived or deleted: the key then no longer works. */
  isLive(ref: KeyCredentialRef): boolean;
  /** The key was revoked: its credential is archived. */
  archive(ref: KeyCredentialRef): void;
  /** A use: the credential's `last_used_at`, and a `vault.credential_used` event in the session's log when one is named. */
  recordUse(ref: KeyCredentialRef, environmentId: string, sessionId: string | undefined, target: string): void;
}
