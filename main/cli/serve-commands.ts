/**
 * `serve link` and `serve rotate-key`: the credentials' commands, run beside (or instead of)
 * a running `serve` on the same data folder. Both find the running one through DATA/serve.json
 * and call it with the API key (CORRAL_API_KEY, else DATA/api-key); neither prints the key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_KEY_FILE } from '../api/http/auth';
import { writeKeyFile } from '../api/http/ui-auth';
import { newApiKey } from '../api/http/auth';
import { readServeState } from './serve-state';

/** A command's failure: one line on stderr and exit code 1. */
export class CommandError extends Error {}

function currentKey(dataDir: string): string {
  if (process.env.CORRAL_API_KEY) return process.env.CORRAL_API_KEY;
  try {
    return fs.readFileSync(path.join(dataDir, API_KEY_FILE), 'utf8').trim();
  } catch {
    throw new CommandError(`no API key: ${path.join(dataDir, API_KEY_FILE)} is missing and CORRAL_API_KEY is not set`);
  }
}

async function call(url: string, key: string, what: string): Promise<Record<string, string>> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'x-api-key': key } });
  } catch (err) {
    throw new CommandError(`the running serve does not answer at ${new URL(url).origin}: ${(err as Error).message}`);
  }
  if (res.status === 401) throw new CommandError(`the running serve refused the key (${what}): use the key it was started with (CORRAL_API_KEY or the data folder's api-key)`);
  if (!res.ok) throw new CommandError(`the running serve answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as Record<string, string>;
}

/** Prints a new one-time link of the running serve. */
export async function linkCommand(dataDir: string): Promise<void> {
  const state = readServeState(dataDir);
  if (!state) throw new CommandError(`no serve is running on ${dataDir}: start it with npm run serve (it prints a link)`);
  const body = await call(`${state.url}/v1/corral/ui_link`, currentKey(dataDir), 'link');
  console.log(`corral serve: open ${body.url} (works once, until ${body.expires_at})`);
}

/**
 * Replaces the API key. With a serve running, through it (it writes DATA/api-key, uses the new
 * key at once and ends every window session and link); otherwise by writing DATA/api-key.
 */
export async function rotateKeyCommand(dataDir: string): Promise<void> {
  const file = path.join(dataDir, API_KEY_FILE);
  const state = readServeState(dataDir);
  if (state) {
    await call(`${state.url}/v1/corral/api_key/rotate`, currentKey(dataDir), 'rotate-key');
    console.log(`corral serve: new API key written to ${file}; the running serve uses it now, and every window session and link has ended (get one with npm run serve -- link)`);
  } else {
    if (!fs.existsSync(dataDir)) throw new CommandError(`no data folder at ${dataDir}`);
    writeKeyFile(file, newApiKey());
    console.log(`corral serve: new API key written to ${file} (no serve was running; it takes effect at the next start)`);
  }
  if (process.env.CORRAL_API_KEY) console.warn('corral serve: warning: CORRAL_API_KEY is set; a serve started with it uses that key, not the file: change or unset it');
}
