import path from 'node:path/posix';
import { envEntryProblem } from '../../child-env';
import { StringDecoder } from 'node:string_decoder';
import { BUILTIN_TOOL_NAMES } from '../tools/definitions';
import { applyEdit, editInput } from '../tools/edit';
import { looksBinary, MAX_FILE_BYTES, numberLines, parseViewRange, splitLines, withCap } from '../tools/text';
import { errorOutcome, InputError, optNumber, optString, reqString } from '../tools/input';
import { jsPatternToEre } from '../tools/grep-pattern';
import { checkGlobPattern, cutGrepLine, MAX_GLOB_RESULTS, MAX_GREP_LINE_CHARS, MAX_GREP_LINES } from '../tools/glob';
import { capHeld, droppedLine, OutputCollector } from '../output-cap';
import { PersistentBash } from '../persistent-bash';
import type { ShellSession } from '../shell-session';
import type { ExecuteOptions, Hand, ToolOutcome } from '../types';
import { RemoteFileError, type RemoteShell } from './types';

const DEFAULT_TIMEOUT_MS = 120_000;

/** Quotes a string for `sh`. */
export const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The `sh` command that removes a session's folder on a shared host. It runs at the lowest CPU
 * priority where `nice` exists: a clone of thousands of files is unlinked while other sessions
 * (and, on a loopback host, Corral itself) are answering.
 */
export function removeDirCommand(dir: string): string {
  const rm = `rm -rf -- ${shq(dir)}`;
  return `if command -v nice >/dev/null 2>&1; then nice -n 19 ${rm}; else ${rm}; fi`;
}

/** How long removing a session's folder on a host may take before its hand is closed anyway. */
const REMOVE_DIR_TIMEOUT_MS = 10_000;

/**
 * Removes a session's folder on a shared host (`removeDirCommand`), bounded in time so that a
 * host that stopped answering holds up nothing. Never rejects: a folder left on a host that went
 * away is all that can go wrong, and nothing more can be done about it.
 */
export async function removeRemoteDir(shell: RemoteShell, dir: string): Promise<void> {
  await shell.exec(removeDirCommand(dir), { signal: AbortSignal.timeout(REMOVE_DIR_TIMEOUT_MS) }).catch(() => {});
}

/** What the environment config sets, as `export K=V; ` lines; nothing of the host's own environment is ever sent. */
export function envExports(env: Record<string, string> | undefined): string {
  return Object.entries(env ?? {}).filter(([k, v]) => envEntryProblem(k, v) === undefined).map(([k, v]) => `export ${k}=${shq(v)}; `).join('');
}

/**
 * The built-in tools on any remote hand, through its RemoteShell: bash runs there, files are
 * read and written there, glob/grep search there. Paths are relative to the hand's work folder
 * unless absolute. A lost hand turns each call into an error result that says so.
 */
export function createShellHand(shell: RemoteShell, opts: { workDir: string; label: string; env?: Record<string, string>; replacedLost?: string; adoptShell?: () => ShellSession | undefined }): Hand {
  const { workDir, label } = opts;
  const exports = envExports(opts.env);
  const resolve = (p: string) => (path.isAbsolute(p) ? path.normalize(p) : path.join(workDir, p));
  const lostOutcome = (reason: string): ToolOutcome =>
    errorOutcome(`The hand ${label} is gone: ${reason}. The next call will get a fresh one (with a fresh shell: this one's working folder, variables and background jobs are gone).`, { lost: reason });
  // One shell for the hand's life where the kind can keep one open (cd, export and background
  // jobs survive between calls, as in the reference toolset's BashSession).
  // A pooled hand brings a shell started and set up ahead (prestarted-shell.ts).
  const startShell = shell.startShell;
  const persistent = startShell
    ? new PersistentBash({ startShell, cwd: workDir, exports, replacedLost: opts.replacedLost, ...(opts.adoptShell ? { adopt: opts.adoptShell } : {}) })
    : undefined;

  async function persistentBash(input: Record<string, unknown>, o: ExecuteOptions): Promise<ToolOutcome> {
    const r = await persistent!.run(input, o);
    if (!r.details?.shell_ended) return r;
    // The shell's stream ended: did the hand go with it? (Its stream may end a moment before
    // the kind notices; one command on it settles the question.)
    if (!shell.lostReason) await shell.exec('true').catch(() => undefined);
    const lost = shell.lostReason;
    if (!lost) return r;
    const ending = `[the hand was lost: ${lost}]`;
    return { ...r, content: r.content.replace(/\[[^\n]*\]$/, ending), fullOutput: replaceEnding(r.fullOutput, ending), details: { ...r.details, lost } };
  }

  async function bash(input: Record<string, unknown>, o: ExecuteOptions): Promise<ToolOutcome> {
    const command = reqString(input, 'command', 'bash');
    const timeoutMs = Math.min(o.timeoutMs ?? DEFAULT_TIMEOUT_MS, optNumber(input, 'timeout_ms', 'bash') ?? DEFAULT_TIMEOUT_MS);
    const ctrl = new AbortController();
    let why: 'interrupted' | 'timed out' | undefined;
    const onAbort = () => ((why ??= 'interrupted'), ctrl.abort());
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => ((why ??= 'timed out'), ctrl.abort()), timeoutMs);
    const collector = new OutputCollector();
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const started = Date.now();
    try {
      if (o.signal?.aborted) onAbort();
      const res = await shell.exec(exports + command, {
        cwd: workDir,
        signal: ctrl.signal,
        onOutput: (chunk, stream) => collector.push(decoders[stream].write(chunk), chunk.length),
      });
      collector.push(decoders.stdout.end());
      collector.push(decoders.stderr.end());
      const out = collector.held();
      const cap = capHeld(out);
      const ending = res.lost
        ? `[the hand was lost: ${res.lost}]`
        : why
          ? `[${why} after ${Date.now() - started} ms: the command's process group was killed]`
          : res.exitCode === null
            ? `[killed${res.signal ? ` by SIG${res.signal}` : ''}]`
            : `[exit code ${res.exitCode}]`;
      const content = `${cap.content}${cap.content && !cap.content.endsWith('\n') ? '\n' : ''}${ending}`;
      const outcome: ToolOutcome = {
        content,
        isError: Boolean(res.lost || why),
        details: { exit_code: res.exitCode, signal: res.signal ?? null, duration_ms: Date.now() - started, output_chars: out.totalChars, truncated: cap.truncated, ...(res.lost ? { lost: res.lost } : {}) },
      };
      // The pieces as they are (up to 64 MiB): never joined on the host's loop (output-cap.ts).
      if (cap.truncated) outcome.fullOutput = out.droppedBytes > 0 ? [...out.head, '\n', droppedLine(out.droppedBytes), '\n', ...out.tail] : out.head;
      return outcome;
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  async function readText(p: string, tool: string): Promise<string | ToolOutcome> {
    try {
      const buf = await shell.readFile(resolve(p), MAX_FILE_BYTES);
      if (looksBinary(buf)) return errorOutcome(`${p} looks like a binary file (it has NUL bytes); ${tool} works on text files only.`, { bytes: buf.length });
      return buf.toString('utf8');
    } catch (err) {
      return fileError(err, p);
    }
  }

  async function read(input: Record<string, unknown>): Promise<ToolOutcome> {
    const p = reqString(input, 'file_path', 'read');
    const range = parseViewRange(input.view_range);
    const text = await readText(p, 'read');
    if (typeof text !== 'string') return text;
    if (text === '') return { content: `[${p} is empty]`, isError: false, details: { path: resolve(p), bytes: 0 } };
    const lines = splitLines(text);
    const [s, e] = range ?? [1, -1];
    if (s < 1) throw new InputError('Invalid input for read: view_range start_line must be 1 or more.');
    if (s > lines.length) return errorOutcome(`view_range starts at line ${s}, but ${p} has only ${lines.length} lines.`);
    const end = e <= 0 ? lines.length : Math.min(e, lines.length);
    return withCap(numberLines(lines.slice(s - 1, end), s), { path: resolve(p), total_lines: lines.length, start_line: s, end_line: end });
  }

  async function write(input: Record<string, unknown>): Promise<ToolOutcome> {
    const p = reqString(input, 'file_path', 'write');
    const content = reqString(input, 'content', 'write');
    try {
      await shell.writeFile(resolve(p), Buffer.from(content));
    } catch (err) {
      return fileError(err, p);
    }
    return { content: `Wrote ${Buffer.byteLength(content).toLocaleString('en-US')} bytes to ${p}.`, isError: false, details: { path: resolve(p), bytes: Buffer.byteLength(content) } };
  }

  async function edit(input: Record<string, unknown>): Promise<ToolOutcome> {
    const edit = editInput(input);
    const p = edit.filePath;
    const text = await readText(p, 'edit');
    if (typeof text !== 'string') return text;
    const applied = applyEdit(text, edit);
    if ('content' in applied) return applied;
    const { count } = applied;
    try {
      await shell.writeFile(resolve(p), Buffer.from(applied.updated));
    } catch (err) {
      return fileError(err, p);
    }
    return { content: `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${p}.`, isError: false, details: { path: resolve(p), occurrences: count } };
  }

  async function capture(command: string, signal?: AbortSignal): Promise<{ out: string; code: number | null; lost?: string }> {
    const chunks: Buffer[] = [];
    const res = await shell.exec(command, { cwd: workDir, signal, onOutput: (c, s) => s === 'stdout' && chunks.push(c) });
    return { out: Buffer.concat(chunks).toString('utf8'), code: res.exitCode, lost: res.lost };
  }

  async function glob(input: Record<string, unknown>, o: ExecuteOptions): Promise<ToolOutcome> {
    const pattern = reqString(input, 'pattern', 'glob');
    const root = resolve(optString(input, 'path', 'glob') ?? '.');
    const re = checkGlobPattern(pattern);
    const skip = /node_modules|\.git/.test(pattern) ? '' : ` \\( -name node_modules -o -name .git \\) -prune -o`;
    // A file name may hold a newline: names end with NUL, swapped with newline for head (which
    // counts lines everywhere, while only GNU's has -z) and swapped back here.
    const res = await capture(`cd ${shq(root)} && find .${skip} -type f -print0 2>/dev/null | tr '\\n\\0' '\\0\\n' | head -n 200000`, o.signal);
    if (res.lost) return lostOutcome(res.lost);
    if (res.code !== 0 && res.out === '') return errorOutcome(`Cannot search ${root}: no such folder, or it cannot be read.`);
    const matches = res.out.split('\n').filter(Boolean).map((f) => f.replace(/\0/g, '\n').replace(/^\.\//, '')).filter((f) => re.test(f)).sort();
    if (matches.length === 0) return { content: `No files match ${pattern} under ${root}.`, isError: false, details: { matches: 0 } };
    const shown = matches.slice(0, MAX_GLOB_RESULTS);
    const more = matches.length > shown.length ? `\n[… ${matches.length - shown.length} more; narrow the pattern]` : '';
    return { content: shown.join('\n') + more, isError: false, details: { matches: matches.length } };
  }

  async function grep(input: Record<string, unknown>, o: ExecuteOptions): Promise<ToolOutcome> {
    const pattern = reqString(input, 'pattern', 'grep');
    const root = resolve(optString(input, 'path', 'grep') ?? '.');
    const translated = jsPatternToEre(pattern);
    if ('invalid' in translated) return errorOutcome(translated.invalid);
    if ('refused' in translated) return errorOutcome(translated.refused);
    // find + xargs grep works with GNU and busybox alike (busybox grep has no -I or
    // --exclude-dir); /dev/null makes grep print file names even for a single file. A matching
    // line can be megabytes long (a minified file): cut is told to keep far more bytes than the
    // result shows (room for the path and multi-byte characters), so no more comes over than that.
    const cmd =
      `test -e ${shq(root)} || exit ${NO_SUCH_PATH}; ` +
      `find ${shq(root)} \\( -name .git -o -name node_modules \\) -prune -o -type f -print0 2>/dev/null` +
      ` | xargs -0 grep -nE -e ${shq(translated.ere)} /dev/null 2>&1 | cut -c 1-${GREP_LINE_BYTES_FETCHED} | head -n ${MAX_GREP_LINES + 50}`;
    const res = await capture(cmd, o.signal);
    if (res.lost) return lostOutcome(res.lost);
    if (res.code === NO_SUCH_PATH && res.out === '') return errorOutcome(`Path not found: ${optString(input, 'path', 'grep')}`);
    // Binary files are skipped, whatever wording this grep uses to say it.
    const lines = res.out.split('\n').filter((l) => l && !/^Binary file .* matches$|^grep: .*: binary file matches$/.test(l));
    const failure = lines.find((l) => /^(grep|xargs): /.test(l));
    if (failure && lines.every((l) => /^(grep|xargs): /.test(l))) return errorOutcome(failure);
    if (lines.length === 0) return { content: `No matches for /${pattern}/ under ${root}.`, isError: false, details: { matches: 0 } };
    // In path order, as on the local hand (find lists a folder in the order its entries happen to be on disk).
    lines.sort((a, b) => {
      const pa = grepLinePath(a);
      const pb = grepLinePath(b);
      return pa === pb ? 0 : pa === undefined ? 1 : pb === undefined ? -1 : pa < pb ? -1 : 1;
    });
    const shown = lines.slice(0, MAX_GREP_LINES).map((l) => cutRemoteGrepLine(l.startsWith(workDir + '/') ? l.slice(workDir.length + 1) : l));
    const more = lines.length > MAX_GREP_LINES ? `\n[more than ${MAX_GREP_LINES} matching lines; narrow the pattern or the path]` : '';
    return withCap(shown.join('\n') + more, { matches: shown.length });
  }

  const tools: Record<string, (input: Record<string, unknown>, o: ExecuteOptions) => Promise<ToolOutcome>> = { bash: persistent ? persistentBash : bash, read, write, edit, glob, grep };
  return {
    tools: BUILTIN_TOOL_NAMES,
    async execute(name, input, o = {}) {
      const tool = tools[name];
      if (!tool) return errorOutcome(`Unknown tool '${name}'. This hand answers: ${Object.keys(tools).join(', ')}.`);
      if (shell.lostReason) return lostOutcome(shell.lostReason);
      try {
        return await tool(input ?? {}, o);
      } catch (err) {
        if (err instanceof InputError) return errorOutcome(err.message);
        if (err instanceof RemoteFileError && err.code === 'LOST') return lostOutcome(err.message);
        throw err;
      }
    },
    dispose: async () => {
      // The shell's group is killed while the connection still carries the kill.
      await persistent?.dispose();
      await shell.close();
    },
  };
}

/** A full output with its last line (the status in brackets) replaced: in its last piece when it is in pieces. */
function replaceEnding(full: ToolOutcome['fullOutput'], ending: string): ToolOutcome['fullOutput'] {
  if (typeof full === 'string') return full.replace(/\[[^\n]*\]$/, ending);
  const last = full?.at(-1) ?? '';
  return full && [...full.slice(0, -1), typeof last === 'string' ? last.replace(/\[[^\n]*\]$/, ending) : last];
}

/** The exit code of grep's command when its path does not exist. */
const NO_SUCH_PATH = 3;

/** Bytes of each grep output line brought over from the hand (`cut -c`): a path, `:N:` and MAX_GREP_LINE_CHARS characters of up to 4 bytes. */
const GREP_LINE_BYTES_FETCHED = 4096 + 32 + MAX_GREP_LINE_CHARS * 4;

/** The path of a grep line `path:N:text`. */
const grepLinePath = (line: string) => /^(.*?):\d+:/.exec(line)?.[1];

/** A remote grep line `path:N:text` with its text cut as the local hand cuts it. */
function cutRemoteGrepLine(line: string): string {
  const m = /^(.*?:\d+:)/.exec(line);
  return m ? cutGrepLine(m[1]!, line.slice(m[1]!.length)) : line;
}

function fileError(err: unknown, p: string): ToolOutcome {
  if (!(err instanceof RemoteFileError)) throw err;
  const say: Record<RemoteFileError['code'], string> = {
    ENOENT: `${p} does not exist.`,
    EISDIR: `${p} is a directory, not a file.`,
    EACCES: `${p} cannot be accessed (permission denied).`,
    TOOBIG: `${p} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; look at it with bash (head, tail, grep).`,
    LOST: `the hand is gone: ${err.message}`,
    OTHER: `${p}: ${err.message}`,
  };
  return errorOutcome(say[err.code], { code: err.code });
}
