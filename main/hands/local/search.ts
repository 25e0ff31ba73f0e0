import fs from 'node:fs/promises';
import type { ToolOutcome } from '../types';
import { checkGlobPattern } from '../tools/glob';
import { errorOutcome, optString, reqString } from '../tools/input';
import { runOffLoop } from './off-loop/lanes';
import type { WorkDir } from './paths';

/**
 * glob and grep on the local hand. The input is checked here; the walk and the matching (up to
 * 200k entries and 50 MB files, or a regular expression that backtracks for ever) run on a worker
 * thread (search-scan.ts), so the host's event loop keeps serving every other session meanwhile.
 * Aborting the call (an interrupt, a timeout, the hand shutting down) terminates the worker.
 */

/** How a search call may be stopped. */
export interface SearchOptions {
  /** The call's own signal (an interrupt). */
  signal?: AbortSignal;
  /** Stop the search after this long (reported as a time-out, not an interrupt). */
  timeoutMs?: number;
  /** Aborted when the hand shuts down. */
  shutdown?: AbortSignal;
}

/** Resolves the optional `path` input to a search root inside the work folder. */
async function searchRoot(work: WorkDir, input: Record<string, unknown>, tool: string): Promise<{ root: string; shown: string; isDir: boolean } | ToolOutcome> {
  const given = optString(input, 'path', tool);
  const root = given === undefined || given === '' ? work.real : work.resolve(given);
  const shown = given === undefined || given === '' ? 'the work folder' : given;
  try {
    return { root, shown, isDir: (await fs.stat(root)).isDirectory() };
  } catch {
    return errorOutcome(`Path not found: ${shown}`);
  }
}

export async function globTool(work: WorkDir, input: Record<string, unknown>, opts: SearchOptions = {}): Promise<ToolOutcome> {
  const pattern = reqString(input, 'pattern', 'glob');
  checkGlobPattern(pattern); // Refuses a bad pattern here, before a worker is asked.
  const where = await searchRoot(work, input, 'glob');
  if ('isError' in where) return where;
  if (!where.isDir) return errorOutcome(`${where.shown} is not a directory; "path" must be a folder to search under.`);
  return stoppable('glob', opts, (signal) => runOffLoop('search', { kind: 'glob', workDir: work.dir, root: where.root, shown: where.shown, pattern }, signal));
}

export async function grepTool(work: WorkDir, input: Record<string, unknown>, opts: SearchOptions = {}): Promise<ToolOutcome> {
  const pattern = reqString(input, 'pattern', 'grep');
  try {
    new RegExp(pattern);
  } catch (err) {
    return errorOutcome(`Invalid regular expression for grep: ${(err as Error).message}. The pattern is JavaScript RegExp source (escape special characters like ( [ { . * + ? with a backslash).`);
  }
  const where = await searchRoot(work, input, 'grep');
  if ('isError' in where) return where;
  return stoppable('grep', opts, (signal) => runOffLoop('search', { kind: 'grep', workDir: work.dir, root: where.root, shown: where.shown, rootIsDir: where.isDir, pattern }, signal));
}

/** Runs a search that an abort or `timeoutMs` stops, answering with what stopped it. */
async function stoppable(tool: string, opts: SearchOptions, search: (signal: AbortSignal) => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const started = Date.now();
  const ctrl = new AbortController();
  let timedOut = false;
  const onAbort = () => ctrl.abort();
  const signals = [opts.signal, opts.shutdown].filter((s) => s !== undefined);
  for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
  const timer = opts.timeoutMs !== undefined && opts.timeoutMs > 0 ? setTimeout(() => ((timedOut = true), ctrl.abort()), Math.min(opts.timeoutMs, 2 ** 31 - 1)) : undefined;
  try {
    if (signals.some((s) => s.aborted)) ctrl.abort();
    return await search(ctrl.signal);
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
    const ms = Date.now() - started;
    if (timedOut) return errorOutcome(`[timed out after ${opts.timeoutMs} ms; the ${tool} search was stopped]`, { timed_out: true, duration_ms: ms });
    const why = opts.shutdown?.aborted ? 'the hand was shut down' : 'the call was aborted';
    return errorOutcome(`[interrupted: ${why} after ${ms} ms; the ${tool} search was stopped]`, { interrupted: true, duration_ms: ms });
  } finally {
    clearTimeout(timer);
    for (const s of signals) s.removeEventListener('abort', onAbort);
  }
}
