import { WorkDir } from '../paths';
import type { ToolOutcome } from '../../types';
import { editOutcome, readOutcome, type EditText, type ReadText } from '../file-text';
import { scanGlob, scanGrep, type GlobScan, type GrepScan } from '../search-scan';

/** A read of a large file, done whole on a worker. */
export interface ReadJob {
  kind: 'read';
  /** The work folder: what is opened is checked again to lie inside it. */
  workDir: string;
  /** Real absolute path, already checked to be inside the work folder. */
  abs: string;
  text: ReadText;
}

/** An edit of a large file, done whole (read, replace, write) on a worker. */
export interface EditJob {
  kind: 'edit';
  workDir: string;
  abs: string;
  text: EditText;
}

/** Everything a worker does: plain data in, a ToolOutcome out. */
export type OffLoopJob = GlobScan | GrepScan | ReadJob | EditJob;

/** Runs one job synchronously (on the worker thread that received it). */
export function runJob(job: OffLoopJob): ToolOutcome {
  switch (job.kind) {
    case 'glob':
      return scanGlob(job);
    case 'grep':
      return scanGrep(job);
    case 'read':
      return readOutcome(new WorkDir(job.workDir).readFile(job.abs), job.text);
    case 'edit': {
      const work = new WorkDir(job.workDir);
      const { outcome, updated } = editOutcome(work.readFile(job.abs), job.text);
      if (updated) work.writeFile(job.abs, updated);
      return outcome;
    }
  }
}
