import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

/** Starts serve; resolves with its output once it is up, or once it exits. */
function serve(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ lines: string[]; code: number | null }> {
  const { CORRAL_API_KEY: _a, ANTHROPIC_API_KEY: _b, ANTHROPIC_AUTH_TOKEN: _c, CORRAL_VAULT_PASSPHRASE: _d, ...base } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], {
    cwd: root,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve) => {
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push(l);
      if (l.includes('open http')) resolve({ lines, code: null });
    });
    readline.createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
    child.once('close', (code) => resolve({ lines, code }));
  });
}

describe('serve and the vault', () => {
  it('says where the vault key and the model key come from, never what they are; a wrong passphrase stops it with a clear error', async () => {
    const dataDir = tmpDir();
    const env = { ANTHROPIC_API_KEY: 'sk-ant-planted-model-key-123', CORRAL_VAULT_PASSPHRASE: 'planted passphrase 456' };
    const first = await serve(dataDir, env);
    const text = first.lines.join('\n');
    expect(first.code).toBeNull();
    expect(text).toContain('corral serve: vault sealed with the passphrase in CORRAL_VAULT_PASSPHRASE (scrypt)');
    expect(text).toMatch(/corral serve: model key: ANTHROPIC_API_KEY from the environment \(a first-run fallback/);
    expect(text).not.toContain('planted');
    const stopping = children.pop()!;
    const gone = new Promise((r) => stopping.once('exit', r));
    stopping.kill('SIGTERM');
    await gone; // it holds the data folder until then

    const wrong = await serve(dataDir, { ...env, CORRAL_VAULT_PASSPHRASE: 'not the passphrase' });
    expect(wrong.code).toBe(1);
    expect(wrong.lines.join('\n')).toMatch(/failed to start: CORRAL_VAULT_PASSPHRASE does not open the vault .*\(wrong passphrase\)/);

    const keyFile = await serve(tmpDir(), {});
    expect(keyFile.lines.join('\n')).toMatch(/vault sealed with the key file .*vault\.key/);
    expect(keyFile.lines.join('\n')).toMatch(/model key: none \(set ANTHROPIC_API_KEY/);
  }, 60_000);
});
