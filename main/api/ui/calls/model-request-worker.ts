/**
 * Entry of the worker thread that builds model request views (model-request.ts): it opens the
 * session log read-only and runs the brain's buildRequest, off the host's event loop.
 */
import Database from 'better-sqlite3';
import { parentPort } from 'node:worker_threads';
import type { JobReply } from '../../../hands/local/off-loop/pool';
import { SessionLog } from '../../../session/store';
import { buildModelRequestView, type ModelRequestJob } from './model-request';

const logs = new Map<string, SessionLog>();

/** One read-only connection per database file, kept while the worker lives. */
function logFor(file: string): SessionLog {
  let log = logs.get(file);
  if (!log) {
    // The desktop app names its Electron build of the addon the way the shell does.
    const binding = process.env.CORRAL_SQLITE_BINDING || undefined;
    const db = new Database(file, { readonly: true, fileMustExist: true, ...(binding ? { nativeBinding: binding } : {}) });
    db.pragma('busy_timeout = 10000');
    log = new SessionLog(db);
    logs.set(file, log);
  }
  return log;
}

const port = parentPort;
if (!port) throw new Error('model-request-worker.ts runs as a worker thread');
port.on('message', (job: ModelRequestJob) => {
  let reply: JobReply;
  try {
    reply = { ok: true, value: buildModelRequestView(logFor(job.dbFile), job) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { ok: false, error: { name: e.name, message: e.message } };
  }
  port.postMessage(reply);
});
