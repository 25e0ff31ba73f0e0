/**
 * A brain process gets an allowlisted environment: what it needs to run and its knobs, and
 * nothing else of the host's: not the API server's key, not the model's key (the vault gives a
 * brain a proxy capability instead; test/vault/brain.test.ts), not whatever the user's shell exported.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkBrain } from '../../main/brain/supervisor';
import { brainEnv, commandEnv, hostGitEnv } from '../../main/child-env';

const PLANTED = {
  CORRAL_API_KEY: 'planted-corral-key',
  DATABASE_URL: 'postgres://app:planted-hunter2@db/app',
  GH_PAT: 'planted-gh-pat',
  AWS_SESSION_CREDENTIALS: 'planted-aws',
  SOME_INNOCENT_NAME: 'planted-innocent',
};

describe('the environments the host hands down', () => {
  it('brainEnv keeps the knobs and the model URL, and drops everything else, the model key too', () => {
    const env = brainEnv({ ...PLANTED, PATH: '/bin', HOME: '/h', ANTHROPIC_API_KEY: 'model-key', ANTHROPIC_BASE_URL: 'http://m', CORRAL_RETRY_BASE_MS: '5', TSX_TSCONFIG_PATH: 'x' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', ANTHROPIC_BASE_URL: 'http://m', CORRAL_RETRY_BASE_MS: '5', TSX_TSCONFIG_PATH: 'x' });
  });

  it('commandEnv takes seven names from the host, then the config, which may not set loader variables', () => {
    const host = { ...PLANTED, PATH: '/bin', HOME: '/h', USER: 'u', LANG: 'C', TERM: 'dumb', SHELL: '/bin/bash', TMPDIR: '/t', ANTHROPIC_API_KEY: 'k' };
    expect(commandEnv({ GOFLAGS: '-mod=mod', LD_PRELOAD: '/evil.so', PATH: '/opt/bin:/bin' }, host)).toEqual({
      PATH: '/opt/bin:/bin', HOME: '/h', USER: 'u', LANG: 'C', TERM: 'dumb', SHELL: '/bin/bash', TMPDIR: '/t', GOFLAGS: '-mod=mod',
    });
  });

  it('hostGitEnv (the host cloning a repository resource) adds the SSH agent and proxy settings, nothing planted', () => {
    const host = { ...PLANTED, PATH: '/bin', HOME: '/h', SSH_AUTH_SOCK: '/run/agent', HTTPS_PROXY: 'http://proxy:3128', ANTHROPIC_API_KEY: 'k' };
    expect(hostGitEnv(host)).toEqual({ PATH: '/bin', HOME: '/h', SSH_AUTH_SOCK: '/run/agent', HTTPS_PROXY: 'http://proxy:3128' });
  });

  it('a forked brain process sees none of the planted variables', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, PLANTED, { ANTHROPIC_API_KEY: 'model-key-for-the-brain' });
    try {
      const child = forkBrain(path.join(__dirname, '../fixtures/env-brain.ts'), 'sesn_env', ['--import', 'tsx']);
      const env = await new Promise<Record<string, string>>((resolve) => child.onMessage((m) => resolve((m as unknown as { env: Record<string, string> }).env)));
      for (const [k, v] of Object.entries(PLANTED)) {
        expect(env[k], k).toBeUndefined();
        expect(JSON.stringify(env)).not.toContain(v);
      }
      // No host serves this session: no capability either.
      expect(env.ANTHROPIC_API_KEY).toBeUndefined();
      expect(JSON.stringify(env)).not.toContain('model-key-for-the-brain');
    } finally {
      for (const k of Object.keys(PLANTED)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
