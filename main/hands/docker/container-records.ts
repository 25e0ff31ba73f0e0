/**
 * The containers hands create, recorded in the data folder while they exist
 * (`DATA/run/containers/<name>.json`), so that a host killed without warning (kill -9, a crash,
 * a power cut) does not leave them running on the engine for ever: the next host on the same
 * data folder removes every container still on record. The record is written before the
 * container is created (its name is chosen here), so no container exists unrecorded, and it is
 * deleted once the engine has removed the container (or says it is gone). One host holds a data
 * folder at a time (data-lock.ts), so a record found at start belongs to a host that is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { Logger } from '../../logging/logger';
import { connectEngine, describeConnectError } from './engine';

/** A container on record. */
export interface ContainerRecord {
  /** The container's name on its engine (unique: containerName adds random bytes). */
  name: string;
  /** The engine, as connectEngine reaches it again (`unix:///…`, `tcp://…`, `ssh://…`). */
  endpoint: string;
  /** The host that made it (for people reading the folder). */
  host_pid: number;
  created_at: string;
}

export const containerRecordDir = (dataDir: string) => path.join(dataDir, 'run', 'containers');

/** Records the containers of one host; written and deleted off the event loop. */
export class ContainerRecords {
  private made = false;
  constructor(private readonly dir: string) {}

  /** Puts a container on record; resolves once the record is on disk. */
  async add(name: string, endpoint: string): Promise<void> {
    if (!this.made) {
      await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
      this.made = true;
    }
    const record: ContainerRecord = { name, endpoint, host_pid: process.pid, created_at: new Date().toISOString() };
    // Whole or not at all: a reader never sees half a record.
    const file = this.fileOf(name);
    await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 });
    await fs.promises.rename(`${file}.tmp`, file);
  }

  /** Takes a container off record (it is removed, or was never created). Never rejects. */
  async forget(name: string): Promise<void> {
    await fs.promises.rm(this.fileOf(name), { force: true }).catch(() => {});
  }

  private fileOf(name: string): string {
    return path.join(this.dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`);
  }
}

/**
 * The containers on record in a data folder, read at once (at a host's start, before it creates
 * any: they are all a dead host's). Unreadable records are dropped: they name nothing to remove.
 */
export function takeContainerRecords(dataDir: string): ContainerRecord[] {
  const dir = containerRecordDir(dataDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  // A record being written when its host died names a container not made yet.
  for (const n of names.filter((n) => n.endsWith('.tmp'))) fs.rmSync(path.join(dir, n), { force: true });
  names = names.filter((n) => n.endsWith('.json'));
  const out: ContainerRecord[] = [];
  for (const n of names) {
    try {
      const r = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as Partial<ContainerRecord>;
      if (typeof r.name === 'string' && typeof r.endpoint === 'string') {
        out.push({ name: r.name, endpoint: r.endpoint, host_pid: Number(r.host_pid), created_at: String(r.created_at) });
        continue;
      }
    } catch {
      // fall through: not a record
    }
    fs.rmSync(path.join(dir, n), { force: true });
  }
  return out;
}

/** What removing a dead host's containers came to. */
export interface OrphanSweep {
  /** Removed now. */
  removed: string[];
  /** Already gone from their engine. */
  gone: string[];
  /** Still there (the engine could not be reached or refused): kept on record for the next start. */
  kept: { name: string; endpoint: string; why: string }[];
}

const REMOVE_TIMEOUT_MS = 10_000;

/** Removes the containers on record (forced, with their volumes); each engine is reached once. */
export async function removeOrphanContainers(dataDir: string, records: ContainerRecord[], connect = connectEngine): Promise<OrphanSweep> {
  const sweep: OrphanSweep = { removed: [], gone: [], kept: [] };
  const files = new ContainerRecords(containerRecordDir(dataDir));
  const byEndpoint = new Map<string, string[]>();
  for (const r of records) (byEndpoint.get(r.endpoint) ?? byEndpoint.set(r.endpoint, []).get(r.endpoint)!).push(r.name);
  await Promise.all(
    [...byEndpoint].map(async ([endpoint, names]) => {
      let docker: Docker;
      try {
        ({ docker } = await connect(endpoint));
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        for (const name of names) sweep.kept.push({ name, endpoint, why });
        return;
      }
      await Promise.all(
        names.map(async (name) => {
          const r = await removeContainer(docker.getContainer(name), REMOVE_TIMEOUT_MS);
          if (!r.gone) return void sweep.kept.push({ name, endpoint, why: r.why });
          (r.already ? sweep.gone : sweep.removed).push(name);
          await files.forget(name);
        }),
      );
    }),
  );
  return sweep;
}

/** How a removal ended: the container is gone (removed now, or it already was), or it is still there and why. */
export type Removal = { gone: true; already: boolean } | { gone: false; why: string };

/** Removes a container (forced, with its volumes). Never rejects. */
export async function removeContainer(container: Docker.Container, timeoutMs: number): Promise<Removal> {
  try {
    await container.remove({ force: true, v: true, abortSignal: AbortSignal.timeout(timeoutMs) });
    return { gone: true, already: false };
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    // 404: no such container; 409: its removal is already under way.
    if (status === 404 || status === 409) return { gone: true, already: true };
    return { gone: false, why: describeConnectError(err) };
  }
}

/** Removes, in the background, the containers a dead host left on record, and says so in the host's log. */
export function sweepLeftContainers(dataDir: string, records: ContainerRecord[], logger: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  if (records.length === 0) return Promise.resolve();
  return removeOrphanContainers(dataDir, records).then(
    (s) => {
      if (s.removed.length + s.gone.length > 0) logger.info({ removed: s.removed, already_gone: s.gone }, 'removed the containers a host that stopped without cleaning up left');
      for (const k of s.kept) logger.warn({ container: k.name, endpoint: k.endpoint, reason: k.why }, 'a container left by a host that stopped without cleaning up could not be removed; the next start tries again');
    },
    (err: unknown) => logger.warn({ err: String(err) }, 'removing the containers a stopped host left failed'),
  );
}
