import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { AgentStore } from './catalog/agents';
import { EnvironmentStore } from './catalog/environments';
import { createUiService, type UiService } from './api/ui-service';
import { openDatabase } from './session/db';
import { listSessionIds } from './session/list';
import { SessionLog } from './session/store';

/** How to start a host. */
export interface HostOptions {
  /** The data folder: the database and the server's key live here. */
  dataDir: string;
  /** better-sqlite3 addon for a non-Node ABI (the desktop app's Electron build). */
  nativeBinding?: string;
}

/**
 * The host: everything the desktop app's main process and the headless server share. Plain
 * Node; the Electron shell and `serve` each compose one.
 */
export interface Host {
  readonly dataDir: string;
  readonly db: Database;
  readonly log: SessionLog;
  readonly agents: AgentStore;
  readonly environments: EnvironmentStore;
  readonly ui: UiService;
  close(): void;
}

export function createHost(opts: HostOptions): Host {
  const db = openDatabase({ file: path.join(opts.dataDir, 'corral.sqlite'), nativeBinding: opts.nativeBinding });
  const log = new SessionLog(db);
  const ui = createUiService({
    log,
    listSessions: (limit, includeArchived) =>
      listSessionIds(db, { limit, includeArchived }).data.flatMap((id) => log.findSession(id) ?? []),
  });
  return {
    dataDir: opts.dataDir,
    db,
    log,
    agents: new AgentStore(db),
    environments: new EnvironmentStore(db),
    ui,
    close: () => db.close(),
  };
}
