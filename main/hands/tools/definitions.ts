/**
 * The six built-in tools as the model sees them (Anthropic Messages API tool format). Names
 * and inputs follow the Managed Agents toolset `agent_toolset_20260401`.
 */

/**
 * A tool as the model sees it (the Messages API's tool shape). The one definition in the code
 * base: built-in tools, a kind's extra tools (e.g. `screenshot`), an agent's custom tools and
 * Corral's own `read_session_events` all use it.
 */
export interface ToolDefinition {
  name: string;
  description: string;
  /** A JSON Schema of an object. */
  input_schema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [keyword: string]: unknown };
}

export const BASH_TOOL_DESCRIPTION = [
  'Run a shell command with `bash -c` in the session\'s work folder and return its combined stdout and stderr (in the order they were written), followed by a last line `[exit code N]`.',
  'Each call runs in a fresh shell: nothing carries over between calls (no cd, exported variables, functions or aliases), so chain dependent steps in one command with && or ;. `restart` is accepted but does nothing, because there is no long-lived shell to restart.',
  'stdin is closed: commands that wait for input get end-of-file, so pass non-interactive flags (e.g. `apt-get -y`, `git --no-pager`). The environment holds only PATH, HOME, USER, LANG, TERM, SHELL and TMPDIR (as the host has them) and the variables the environment config sets.',
  'Default timeout 120000 ms (set `timeout_ms` to change it); on timeout or interruption the whole process group is killed.',
  'Long output is cut for you: you get the first ~40% and the last ~60% of 30,000 characters, so filter with grep/head/tail or redirect to a file and read parts of it.',
  'Background jobs (`cmd > log 2>&1 &`) keep running after the call returns, until the session ends; always redirect their output, or the call waits up to 2 s for them.',
  'Prefer the read, write, edit, glob and grep tools for looking at and changing files.',
].join(' ');

/** The built-in tools every hand answers, in the order the model is offered them. */
export const BUILTIN_TOOL_NAMES = ['bash', 'read', 'write', 'edit', 'glob', 'grep'] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** True for the name of a built-in tool. */
export const isBuiltinTool = (name: string): name is BuiltinToolName => (BUILTIN_TOOL_NAMES as readonly string[]).includes(name);

/** A built-in tool's definition: its schema always lists its properties. */
export type BuiltinToolDefinition = ToolDefinition & { name: BuiltinToolName; input_schema: { properties: Record<string, unknown> } };

export const BUILTIN_TOOL_DEFINITIONS: readonly BuiltinToolDefinition[] = [
  {
    name: 'bash',
    description: BASH_TOOL_DESCRIPTION,
    input_schema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The shell command to run (bash syntax; pipes, &&, redirections and multi-line scripts are fine).' },
        timeout_ms: { type: 'integer', minimum: 0, description: 'Time limit for this command in milliseconds; 0 or omitted means the default (120000).' },
        restart: { type: 'boolean', description: 'Accepted for compatibility; a no-op, since every call already starts a fresh shell.' },
      },
      required: [],
    },
  },
  {
    name: 'read',
    description:
      'Read a text file from the work folder. Returns its lines numbered like `cat -n` (line number, tab, line; numbering starts at 1). Use view_range to read part of a long file. Paths are relative to the work folder (absolute paths must be inside it). Directories and binary files are refused: list folders with glob, inspect binaries with bash.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string', description: 'Path of the file, relative to the work folder.' },
        view_range: {
          type: 'array',
          items: { type: 'integer' },
          minItems: 2,
          maxItems: 2,
          description: 'Optional [start_line, end_line], 1-based and inclusive; end_line -1 (or 0) means to the end of the file.',
        },
      },
      required: ['file_path'],
    },
  },
  {
    name: 'write',
    description:
      'Write a whole file in the work folder, creating it and any missing parent folders, or replacing everything it held before. For small changes to an existing file use edit instead. Returns how many bytes were written.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string', description: 'Path of the file, relative to the work folder.' },
        content: { type: 'string', description: 'The complete new contents of the file.' },
      },
      required: ['file_path', 'content'],
    },
  },
  {
    name: 'edit',
    description:
      'Replace text in an existing file: old_string must match the file exactly (whitespace and indentation included) and occur exactly once, unless replace_all is true, in which case every occurrence is replaced. Include enough surrounding lines to make old_string unique. Read the file first. Returns the edited lines, numbered.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: { type: 'string', description: 'Path of the file, relative to the work folder.' },
        old_string: { type: 'string', description: 'The exact text to replace (not empty).' },
        new_string: { type: 'string', description: 'The text to put in its place (must differ from old_string; may be empty to delete).' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence instead of requiring exactly one. Default false.' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  {
    name: 'glob',
    description:
      'Find files whose paths match a glob pattern, e.g. `**/*.ts`, `src/**/test_*.py`, `*.{json,yaml}`. `**` matches any number of folders, `*` and `?` match within one folder name, `{a,b}` alternatives, `[abc]` character sets. The pattern is matched against paths relative to the search folder, so `*.ts` only finds files directly in it. Returns matching file paths (relative to the search folder), sorted, at most 1000. node_modules and .git are skipped unless the pattern names them.',
    input_schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern, relative (e.g. "**/*.md").' },
        path: { type: 'string', description: 'Folder to search under, relative to the work folder. Default: the work folder.' },
      },
      required: ['pattern'],
    },
  },
  {
    name: 'grep',
    description:
      'Search file contents with a regular expression (extended syntax: on this machine a JavaScript RegExp, on remote hands POSIX ERE as grep -E takes it, so keep to what both accept: | ( ) [ ] * + ? {n}; case-sensitive; use a character class like [Ee]rror for either case). Returns matching lines as `path:line_number:text`, paths relative to the work folder, at most 500 lines. Skips binary files, node_modules and .git. Search one file or a folder tree.',
    input_schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression source, for example function\\s+main or TODO|FIXME.' },
        path: { type: 'string', description: 'File or folder to search, relative to the work folder. Default: the work folder.' },
      },
      required: ['pattern'],
    },
  },
];
