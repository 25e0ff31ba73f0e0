/**
 * What an environment config's `env` may set. Plain rules with no Node import: the request
 * schemas use them, and the window's build includes those schemas.
 */

/** A variable name an environment config may set. */
export const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Names a config may not set: they would change how the command is started or confined. */
const RESERVED = /^(LD_|DYLD_|BASH_FUNC_)|^(BASH_ENV|ENV|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|IFS)$/;

/** Why a config's `env` entry is refused, or undefined when it is fine. */
export function envEntryProblem(name: string, value: unknown): string | undefined {
  if (!ENV_VAR_NAME.test(name)) return `'${name}' is not a variable name (letters, digits and _, not starting with a digit)`;
  if (RESERVED.test(name)) return `'${name}' cannot be set: it changes how commands are started`;
  if (typeof value !== 'string') return `the value of '${name}' must be a string`;
  if (value.includes('\0')) return `the value of '${name}' contains a NUL character`;
  return undefined;
}

/**
 * Most characters a config's variables may take in all (names and values). The whole environment
 * goes to exec with the arguments, which Linux caps at 2 MiB: a larger one would fail every start.
 */
export const ENV_MAX_CHARS = 256 * 1024;

/** Why a config's whole `env` is refused for its size, or undefined when it is fine. */
export function envSizeProblem(env: Record<string, unknown>): string | undefined {
  let chars = 0;
  for (const [name, value] of Object.entries(env)) chars += name.length + (typeof value === 'string' ? value.length : 0) + 2;
  return chars > ENV_MAX_CHARS ? `at most ${ENV_MAX_CHARS} characters of variables in all (names and values), not ${chars}` : undefined;
}
