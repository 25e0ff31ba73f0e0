/**
 * `ssh -G` resolves an alias with the allowlisted environment, never the host's: a config's
 * `Match exec` runs a command with it, and the host's environment may hold secrets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { resolveAlias } from '../../main/hands/ssh/ssh-config-file';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-ssh-g-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

it("ssh -G runs without the host's own variables, and a bad config says what ssh said", async () => {
  const seen = path.join(scratch, 'env.txt');
  const config = path.join(scratch, 'config');
  fs.writeFileSync(config, [`Match exec "env > ${seen}"`, '  Port 2201', 'Host corral-planted', '  HostName 127.0.0.9', ''].join('\n'));
  process.env.CORRAL_PLANTED_SECRET = 'planted-ssh-g-secret-4711';
  try {
    const v = await resolveAlias('corral-planted', { file: config, resolver: 'ssh -G' });
    expect(v).toMatchObject({ hostname: '127.0.0.9', port: 2201 });
  } finally {
    delete process.env.CORRAL_PLANTED_SECRET;
  }
  const env = fs.readFileSync(seen, 'utf8');
  expect(env).toMatch(/^PATH=/m);
  expect(env).not.toContain('planted-ssh-g-secret-4711');
  fs.writeFileSync(config, 'Host corral-bad\n  NoSuchOption yes\n');
  await expect(resolveAlias('corral-bad', { file: config, resolver: 'ssh -G' })).rejects.toThrow(/Cannot resolve the ssh config alias 'corral-bad' \(ssh -G\): .*(Bad configuration option|nosuchoption)/i);
});
