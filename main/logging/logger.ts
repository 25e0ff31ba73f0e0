import path from 'node:path';
import pino from 'pino';
import { RotatingFile, type RotationOptions } from './rotating-file';
import { textLine } from './text-line';

/** The host's logger (pino). Records are JSON lines; never put a secret or a message body in one. */
export type Logger = pino.Logger;

/** Where the host's log goes. */
export interface LoggerOptions {
  /** The data folder: records go to `DATA/logs/corral.log`, rotated by size. */
  dataDir?: string;
  /** Also write to stderr (`serve`): as text lines, or JSON with `format: 'json'`. */
  stderr?: boolean;
  /** Format of the stderr copy; the file is always JSON. Default `text`. */
  format?: 'text' | 'json';
  /** Lowest level written; default `info`. */
  level?: pino.LevelWithSilent;
  rotation?: RotationOptions;
}

/** The log file of a data folder. */
export const logFileOf = (dataDir: string) => path.join(dataDir, 'logs', 'corral.log');

/**
 * Keys whose values never reach the log, wherever they appear one level down. Nothing logs
 * headers or bodies today; this is the net under that rule.
 */
const REDACT = ['authorization', 'cookie', 'x-api-key', 'api_key', 'apiKey', 'token', 'password', 'secret', 'body', 'content'];
const redactPaths = [...REDACT.map((k) => `["${k}"]`), ...REDACT.map((k) => `*["${k}"]`)];

/**
 * The host's logger: JSON lines to a rotating file in the data folder and, for `serve`, a copy
 * on stderr. With neither, a silent logger (tests). No transports: those start worker threads,
 * which packaged Electron cannot load from its archive.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const file = opts.dataDir ? new RotatingFile(logFileOf(opts.dataDir), opts.rotation) : undefined;
  if (!file && !opts.stderr) return silentLogger();
  const json = opts.format === 'json';
  const sink = {
    write(line: string) {
      file?.write(line);
      if (opts.stderr) process.stderr.write(json ? line : textLine(line));
    },
  };
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    sink,
  );
}

/** A logger that writes nothing. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** A level name from the environment (`CORRAL_LOG_LEVEL`), or undefined when it is not one. */
export function levelFromEnv(value: string | undefined): pino.LevelWithSilent | undefined {
  const v = value?.trim().toLowerCase();
  return v && ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(v) ? (v as pino.LevelWithSilent) : undefined;
}
