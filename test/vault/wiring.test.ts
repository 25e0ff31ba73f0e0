import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import { redactingHands, redactingLog } from '../../main/vault';
import { brainEnvironment, registerBrainEnvProvider } from '../../main/vault/brain-env';
import { Vault } from '../../main/vault/vault';
import { tmpDir } from '../helpers/tmp';

const TOKEN = 'tok-wiring-0123456789abcdef';
let log: SessionLog;
let vault: Vault;
beforeAll(async () => {
  const dataDir = tmpDir();
  const db = openDatabase({ file: path.join(dataDir, 'corral.sqlite') });
  log = new SessionLog(db);
  vault = new Vault({ db, log, dataDir, env: {} });
  await vault.ready;
  const v = vault.createVault({ display_name: 'w' });
  await vault.createCredential(v.id, { display_name: 'wired', auth: { type: 'static_bearer', mcp_server_url: 'https://m.example/', token: TOKEN } });
});
afterAll(() => {
  vault.close();
  log.close();
});

describe('the redacting views brains and hands write through', () => {
  it('the log view redacts what is appended and is the same log otherwise', () => {
    const view = redactingLog(log, vault);
    const { session } = view.createSession({});
    const e = view.emitEvent(session.id, { type: 'agent.message', content: [{ type: 'text', text: `t=${TOKEN}` }] });
    expect(e.content).toEqual([{ type: 'text', text: 't=[redacted: credential wired]' }]);
    view.emitEvents(session.id, [{ type: 'agent.message', content: [{ type: 'text', text: TOKEN }] }], 'k1');
    expect(JSON.stringify(log.getEvents(session.id))).not.toContain(TOKEN);
    expect(view.getEvents(session.id)).toEqual(log.getEvents(session.id));
  });

  it('the hands view redacts tool output before the brain gets it, and keeps no state of its own', async () => {
    class Hands {
      calls = 0;
      async execute(_s: string, _h: string | undefined, name: string) {
        this.calls++;
        return { content: `${name}: ${Buffer.from(`u:${TOKEN}`).toString('base64')}`, isError: false };
      }
      count() {
        return this.calls;
      }
    }
    const hands = new Hands();
    const view = redactingHands(hands, vault);
    const out = await view.execute('s', undefined, 'bash');
    expect(out.content).toMatch(/^bash: .*\[redacted: credential wired\]/);
    expect(out.content).not.toContain(Buffer.from(`u:${TOKEN}`).toString('base64').slice(4, 30));
    expect(hands.calls).toBe(1);
    expect(view.count()).toBe(1);
  });
});

describe('a brain environment', () => {
  it('leaves out whatever looks secret, and takes a provider\'s capability', () => {
    const base = { PATH: '/bin', ANTHROPIC_API_KEY: 'real', ANTHROPIC_AUTH_TOKEN: 'tok', CORRAL_VAULT_PASSPHRASE: 'pw', GITHUB_TOKEN: 'g', DB_PASSWORD: 'p', SSH_AUTH_SOCK: '/s', CORRAL_RETRY_BASE_MS: '20' };
    expect(brainEnvironment('sesn_x', base).env).toEqual({ PATH: '/bin', CORRAL_RETRY_BASE_MS: '20' });
    let released = 0;
    const off = registerBrainEnvProvider({ envFor: (id) => (id === 'sesn_mine' ? { env: { ANTHROPIC_API_KEY: 'corral-cap-x', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, release: () => released++ } : undefined) });
    try {
      const got = brainEnvironment('sesn_mine', base);
      expect(got.env).toEqual({ PATH: '/bin', CORRAL_RETRY_BASE_MS: '20', ANTHROPIC_API_KEY: 'corral-cap-x', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
      got.release();
      got.release();
      expect(released).toBe(1);
      expect(brainEnvironment('sesn_other', base).env.ANTHROPIC_API_KEY).toBeUndefined();
    } finally {
      off();
    }
  });
});
