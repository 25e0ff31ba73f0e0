import type { Database } from 'better-sqlite3';

/**
 * Numbered schema migrations. Migration N brings the schema from `user_version` N-1 to N.
 * Never edit a migration that has shipped: add a new one.
 */
export const migrations: ReadonlyArray<(db: Database) => void> = [
  // 1: sessions, the append-only event log, agents and environments.
  (db) => {
    db.exec(`
      CREATE TABLE sessions (
        id             TEXT PRIMARY KEY,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        archived_at    TEXT,
        deleted_at     TEXT,
        parent_id      TEXT REFERENCES sessions(id),
        fork_seq       INTEGER,
        status         TEXT NOT NULL DEFAULT 'idle',
        agent_id       TEXT,
        agent_version  INTEGER,
        environment_id TEXT,
        usage          TEXT NOT NULL DEFAULT '{}',
        record         TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX sessions_created ON sessions(created_at, id);
      CREATE INDEX sessions_parent ON sessions(parent_id) WHERE parent_id IS NOT NULL;

      -- One row per event. (session_id, seq) is the position; seq is gapless per session and
      -- continues a fork's parent numbering, so positions mean the same thing in both.
      CREATE TABLE events (
        session_id   TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        id           TEXT NOT NULL,
        type         TEXT NOT NULL,
        processed_at TEXT NOT NULL,
        idem_key     TEXT,
        body         TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX events_id ON events(id);
      CREATE UNIQUE INDEX events_idem ON events(session_id, idem_key) WHERE idem_key IS NOT NULL;
      CREATE INDEX events_type ON events(session_id, type, seq);

      -- Sessions whose events may be purged (a deleted session no fork depends on). A purge
      -- inserts the grant, deletes, and removes the grant in one transaction.
      CREATE TABLE event_purge_grants (session_id TEXT PRIMARY KEY);

      CREATE TRIGGER events_no_update BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be changed'); END;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events
      WHEN NOT EXISTS (SELECT 1 FROM event_purge_grants g WHERE g.session_id = OLD.session_id)
      BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be removed'); END;

      CREATE TABLE agents (
        id          TEXT PRIMARY KEY,
        version     INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        archived_at TEXT,
        record      TEXT NOT NULL
      );
      CREATE INDEX agents_created ON agents(created_at, id);
      CREATE TABLE agent_versions (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        version  INTEGER NOT NULL,
        record   TEXT NOT NULL,
        PRIMARY KEY (agent_id, version)
      ) WITHOUT ROWID;

      CREATE TABLE environments (
        id          TEXT PRIMARY KEY,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        archived_at TEXT,
        record      TEXT NOT NULL
      );
      CREATE INDEX environments_created ON environments(created_at, id);
    `);
  },
  // 2: events become a rowid table with (session_id, seq) as a unique index. In the WITHOUT
  // ROWID table of migration 1 an event's body was part of its primary-key entry, and SQLite
  // reads a whole overflowing entry to compare keys: every seek that passed a 4 MiB event read
  // 4 MiB (about 1 ms), even `max(seq)`. Now the key b-trees hold keys only.
  (db) => {
    db.exec(`
      CREATE TABLE events_v2 (
        session_id   TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        id           TEXT NOT NULL,
        type         TEXT NOT NULL,
        processed_at TEXT NOT NULL,
        idem_key     TEXT,
        body         TEXT NOT NULL
      );
      INSERT INTO events_v2 (session_id, seq, id, type, processed_at, idem_key, body)
        SELECT session_id, seq, id, type, processed_at, idem_key, body FROM events ORDER BY session_id, seq;
      DROP TABLE events;
      ALTER TABLE events_v2 RENAME TO events;
      CREATE UNIQUE INDEX events_position ON events(session_id, seq);
      CREATE UNIQUE INDEX events_id ON events(id);
      CREATE UNIQUE INDEX events_idem ON events(session_id, idem_key) WHERE idem_key IS NOT NULL;
      CREATE INDEX events_type ON events(session_id, type, seq);

      CREATE TRIGGER events_no_update BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be changed'); END;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events
      WHEN NOT EXISTS (SELECT 1 FROM event_purge_grants g WHERE g.session_id = OLD.session_id)
      BEGIN SELECT RAISE(ABORT, 'the event log is append-only: events cannot be removed'); END;
    `);
  },
  // 3: the vault. Secrets are sealed (AES-256-GCM) by main/vault before they get here: the
  // `secret` column holds ciphertext only; `record` holds what the API shows (never a value).
  (db) => {
    db.exec(`
      CREATE TABLE vaults (
        id          TEXT PRIMARY KEY,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        archived_at TEXT,
        record      TEXT NOT NULL
      );
      CREATE INDEX vaults_created ON vaults(created_at, id);

      CREATE TABLE vault_credentials (
        id           TEXT PRIMARY KEY,
        vault_id     TEXT NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        kind         TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        archived_at  TEXT,
        last_used_at TEXT,
        -- One live credential per MCP server URL, and per variable name, in a vault.
        unique_key   TEXT,
        record       TEXT NOT NULL,
        secret       BLOB NOT NULL
      );
      CREATE INDEX vault_credentials_list ON vault_credentials(vault_id, created_at, id);
      CREATE UNIQUE INDEX vault_credentials_unique ON vault_credentials(vault_id, unique_key)
        WHERE unique_key IS NOT NULL AND archived_at IS NULL;

      -- How the vault key is had (key file or passphrase), the passphrase's salt, and a sealed
      -- check value that tells a wrong key from a right one.
      CREATE TABLE vault_keyring (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        mode        TEXT NOT NULL,
        kdf         TEXT,
        salt        BLOB,
        check_value BLOB NOT NULL,
        created_at  TEXT NOT NULL
      );

      CREATE TABLE vault_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
  },
  // 4: machines that dial in (the self-hosted worker protocol). Environment keys are kept as
  // SHA-256 digests only (a key is shown once and only ever compared); a work item's per-item
  // secret likewise. Leases are epoch milliseconds so expiry is one comparison.
  (db) => {
    db.exec(`
      CREATE TABLE environment_keys (
        id             TEXT PRIMARY KEY,
        environment_id TEXT NOT NULL,
        digest         TEXT NOT NULL UNIQUE,
        name           TEXT,
        created_at     TEXT NOT NULL,
        last_used_at   TEXT,
        revoked_at     TEXT
      );
      CREATE INDEX environment_keys_env ON environment_keys(environment_id, created_at, id);

      CREATE TABLE work_items (
        id                  TEXT PRIMARY KEY,
        environment_id      TEXT NOT NULL,
        session_id          TEXT,
        hand                TEXT,
        data_type           TEXT NOT NULL,
        state               TEXT NOT NULL,
        created_at          TEXT NOT NULL,
        polled_at_ms        INTEGER,
        worker_id           TEXT,
        secret_digest       TEXT UNIQUE,
        acknowledged_at     TEXT,
        started_at          TEXT,
        latest_heartbeat_at TEXT,
        lease_ttl_s         INTEGER,
        lease_expires_ms    INTEGER,
        stop_requested_at   TEXT,
        stopped_at          TEXT,
        stop_reason         TEXT,
        metadata            TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX work_items_env ON work_items(environment_id, created_at, id);
      CREATE INDEX work_items_queue ON work_items(environment_id, state, created_at);
      CREATE INDEX work_items_session ON work_items(session_id, state);

      CREATE TABLE worker_polls (
        environment_id TEXT NOT NULL,
        worker_id      TEXT NOT NULL,
        last_poll_ms   INTEGER NOT NULL,
        PRIMARY KEY (environment_id, worker_id)
      );
    `);
  },
  // 5: an environment key's value is also kept in the vault, as an `environment_key` credential
  // (main/vault/environment-keys.ts); the digest stays for comparison. Keys made before have none
  // (NULL) and keep working until revoked; a key with one works only while that credential is live.
  (db) => {
    db.exec(`
      ALTER TABLE environment_keys ADD COLUMN vault_id TEXT;
      ALTER TABLE environment_keys ADD COLUMN credential_id TEXT;
    `);
  },
];

/** Applies every migration above `PRAGMA user_version`, all in one write transaction. */
export function migrate(db: Database): number {
  // Read the version inside the write transaction: two processes opening a new file at once
  // must not both run migration 1.
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > migrations.length) {
      throw new Error(
        `the data folder was written by a newer Corral (schema ${current}, this build knows ${migrations.length}); refusing to open it`,
      );
    }
    for (let v = current; v < migrations.length; v++) {
      migrations[v]!(db);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
  return migrations.length;
}
