import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LiveDelta } from '../../main/brain/live-text';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const rnd = (p: string) => `${p}${crypto.randomBytes(16).toString('hex')}`;
const ENV_KEY = rnd('sk-ant-env-fallback-');

/** A brain's environment as the kernel has it: NAME=value pairs. */
function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')) {
    const i = pair.indexOf('=');
    if (i > 0) env[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return env;
}

async function until<T>(what: string, f: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the model key comes from the vault, and no brain holds one', () => {
  it("a session's vault key reaches the model through the proxy; the brain gets a capability over IPC, never a key", async () => {
    const KEY = rnd('sk-ant-api03-vault-');
    t = await startBrainHost(
      [{ blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }] }, { blocks: [{ type: 'text', text: 'done' }] }],
      { requireModelKey: KEY, envModelKey: ENV_KEY },
    );
    const host = t.host;
    await host.vault.ready;
    const vault = host.vault.createVault({ display_name: 'project' });
    const cred = await host.vault.createCredential(vault.id, { display_name: 'anthropic', auth: { type: 'model_api_key', api_key: KEY } });
    // Brains are pooled (started ahead, brain-pool.ts): the capability reaches one over IPC when it
    // is bound to the session, so it is caught here as it is minted.
    const minted: string[] = [];
    const mint = host.modelProxy.mint.bind(host.modelProxy);
    host.modelProxy.mint = (sessionId) => {
      const cap = mint(sessionId);
      minted.push(cap.token);
      return cap;
    };
    const id = t.newSession('hello', {}, { vault_ids: [vault.id] });
    const events = await t.settled(id);
    expect(events.filter((e) => e.type === 'session.error')).toEqual([]);
    expect(textOf(events.filter((e) => e.type === 'agent.message').pop())).toBe('done');

    // The model server saw the vault's key on each request, and no capability.
    expect(t.model.requests).toHaveLength(2);
    for (const r of t.model.requests) {
      expect(r.headers['x-api-key']).toBe(KEY);
      expect(JSON.stringify(r.headers)).not.toContain('corral-cap-');
    }

    // The ledger: one event per model request, naming the credential and the target, never the value.
    const used = events.filter((e) => e.type === 'vault.credential_used');
    expect(used).toHaveLength(2);
    for (const u of used) {
      expect(u).toMatchObject({ credential_id: cred.id, vault_id: vault.id, kind: 'model_api_key', purpose: 'model', target: `POST ${t.model.url}/v1/messages` });
    }
    expect(JSON.stringify(events)).not.toContain(KEY);
    const starts = events.filter((e) => e.type === 'span.model_request_start').map((e) => e.seq);
    expect(used.map((u) => u.seq > starts[0]!)).toEqual([true, true]);
    expect(host.vault.getCredential(vault.id, cred.id)!.last_used_at).not.toBeNull();

    // The brain lingers after its turn: read its environment from the kernel.
    const pid = host.brains!.pidOf(id)!;
    expect(pid).toBeGreaterThan(0);
    const environ = environOf(pid);
    const raw = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
    expect(raw).not.toContain(KEY);
    expect(raw).not.toContain(ENV_KEY);
    expect(raw).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 20));
    // Started before its session: not even a capability in its environment, nor the upstream's URL.
    expect(environ.ANTHROPIC_BASE_URL).toBeUndefined();
    expect(Object.keys(environ).filter((k) => /KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE/i.test(k))).toEqual([]);
    expect(minted).toHaveLength(1);
    expect(minted[0]).toMatch(/^corral-cap-/);
    expect(raw).not.toContain(minted[0]!);

    // The capability works only while its brain lives.
    const capability = minted[0]!;
    const call = () => fetch(`${host.modelProxy.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': capability, 'content-type': 'application/json' }, body: '{}' });
    expect((await call()).status).not.toBe(401);
    process.kill(pid, 'SIGKILL');
    // (The supervisor may start a fresh brain, with a capability of its own.)
    await until('the capability to die with its brain', async () => (await call()).status === 401);
  });

  it("sessions that name no vault with a key use the host's default vault; without one, ANTHROPIC_API_KEY (no ledger event)", async () => {
    const DEFAULT_KEY = rnd('sk-ant-default-');
    t = await startBrainHost((req) => ({ blocks: [{ type: 'text', text: `key ${req.headers['x-api-key'] === DEFAULT_KEY ? 'default' : 'env'}` }] }), { envModelKey: ENV_KEY });
    const host = t.host;
    await host.vault.ready;
    // No vault key yet: the fallback.
    const first = t.newSession('one');
    let events = await t.settled(first);
    expect(textOf(events.find((e) => e.type === 'agent.message'))).toBe('key env');
    expect(t.model.requests.at(-1)!.headers['x-api-key']).toBe(ENV_KEY);
    expect(events.some((e) => e.type === 'vault.credential_used')).toBe(false);
    expect(await host.vault.defaultModelKeySource()).toMatch(/^ANTHROPIC_API_KEY from the environment/);

    const d = host.vault.createVault({ display_name: 'host default', is_default: true });
    const cred = await host.vault.createCredential(d.id, { auth: { type: 'model_api_key', api_key: DEFAULT_KEY } });
    // A session with a vault that holds no model key falls through to the default vault too.
    const own = host.vault.createVault({ display_name: 'no model key here' });
    const second = t.newSession('two', {}, { vault_ids: [own.id] });
    events = await t.settled(second);
    expect(textOf(events.find((e) => e.type === 'agent.message'))).toBe('key default');
    expect(events.find((e) => e.type === 'vault.credential_used')).toMatchObject({ credential_id: cred.id, vault_id: d.id });
    expect(await host.vault.defaultModelKeySource()).toContain(cred.id);
  });

  it('no key anywhere: a clear error, and no request reaches the model', async () => {
    t = await startBrainHost([{ blocks: [{ type: 'text', text: 'never' }] }], { envModelKey: null });
    const id = t.newSession();
    const events = await t.settled(id);
    expect(t.model.requests).toHaveLength(0);
    expect((events.find((e) => e.type === 'session.error')!.error as { message: string }).message).toMatch(/no model API key: add a model_api_key credential/);
  });

  it('429 with retry-after from the upstream reaches the harness through the proxy unchanged', async () => {
    t = await startBrainHost([{ error: { status: 429, type: 'rate_limit_error' }, retryAfterMs: 150 }, { blocks: [{ type: 'text', text: 'ok' }] }]);
    const id = t.newSession();
    const events = await t.settled(id);
    // The server's wait, plus the harness's spread (brain/retry.ts: at least 100 ms above it).
    const rescheduled = events.find((e) => e.type === 'session.status_rescheduled')!;
    expect(rescheduled).toMatchObject({ error_type: 'model_rate_limited_error' });
    expect(rescheduled.retry_in_ms).toBeGreaterThanOrEqual(150);
    expect(rescheduled.retry_in_ms).toBeLessThanOrEqual(250);
    expect(textOf(events.find((e) => e.type === 'agent.message'))).toBe('ok');
  });
});

describe('redaction of what brains and hands produce', () => {
  it('a vault value the model writes or a tool prints is replaced before it is logged, shown live, or sent back to the model', async () => {
    const TOKEN = rnd('ghp_');
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    // A hostile model: it knows the token (say, from an injected prompt) and tries to get it into the log.
    t = await startBrainHost([
      {
        blocks: [
          { type: 'text', text: `Here it is: ${TOKEN} (and url-encoded: ${encodeURIComponent(TOKEN)}).` },
          // The value in a tool's input: logged redacted, and the tool gets the marker.
          { type: 'tool_use', name: 'bash', input: { command: `echo 'input: ${TOKEN}'` } },
          // The value in a tool's output (a file on the hand holds it), plain, base64'd as HTTP Basic, URL-encoded.
          {
            type: 'tool_use',
            name: 'bash',
            input: { command: `cat token.txt; echo; printf 'x-access-token:%s' "$(cat token.txt)" | base64 -w0; echo; node -e 'console.log(encodeURIComponent(require("fs").readFileSync("token.txt","utf8")))'` },
          },
        ],
        chunkDelayMs: 10,
        firstTokenDelayMs: 300,
      },
      { blocks: [{ type: 'text', text: 'ok' }] },
    ]);
    const host = t.host;
    await host.vault.ready;
    const v = host.vault.createVault({ display_name: 'repo' });
    await host.vault.createCredential(v.id, { display_name: 'github', auth: { type: 'git_token', token: TOKEN, hosts: ['github.com'] } });
    const id = t.newSession('leak it', {}, { vault_ids: [v.id] });
    fs.mkdirSync(host.hands.workDirOf(id), { recursive: true });
    fs.writeFileSync(path.join(host.hands.workDirOf(id), 'token.txt'), TOKEN);
    const live: LiveDelta[] = [];
    host.brains!.subscribeDeltas(id, (d) => live.push(d));
    const events = await t.settled(id);

    const marker = '[redacted: credential github]';
    const message = events.find((e) => e.type === 'agent.message')!;
    expect(textOf(message)).toBe(`Here it is: ${marker} (and url-encoded: ${marker}).`);
    const [echoed, printed] = events.filter((e) => e.type === 'agent.tool_result');
    expect(textOf(echoed).startsWith(`input: ${marker}\n`)).toBe(true);
    expect(printed!.is_error).toBe(false);
    const lines = textOf(printed).split('\n');
    expect(lines[0]).toBe(marker);
    expect(lines[1]).toContain(marker); // the base64 of x-access-token:TOKEN, whatever is left of it decodes to no token
    expect(Buffer.from(lines[1]!.split(marker).join(''), 'base64').toString('latin1')).not.toContain(TOKEN.slice(4, 20));
    expect(lines[2]).toBe(marker);
    const leaked = (s: string) => s.includes(TOKEN) || s.includes(basic.slice(0, 24)) || s.includes(encodeURIComponent(TOKEN));
    expect(leaked(JSON.stringify(events))).toBe(false);
    // Live text: redacted across deltas, and it still adds up to the logged text.
    const text = live.filter((d) => d.type === 'event_delta' && d.event_id === message.id).map((d) => (d as { delta: { content: { text: string } } }).delta.content.text);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe(textOf(message));
    expect(leaked(JSON.stringify(live))).toBe(false);
    // The model is sent the log: it gets the markers back, not the value.
    expect(leaked(JSON.stringify(t.model.requests[1]!.body))).toBe(false);
    expect(JSON.stringify(t.model.requests[1]!.body)).toContain(marker);
  });
});
