import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GitHttpServer } from '../fixtures/git-http-server';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { killServeHost } from '../helpers/serve-kill';
import { startServe as startServeProcess } from '../helpers/serve-process';
import { tmpDir } from '../helpers/tmp';
import { commitSubjects, GIT_USER, plantedSecret, serveRepos } from '../helpers/vault-fixtures';

// A session's git remote and environment_variable credentials keep working after the host is
// killed (kill -9) and started again: `serve` in its own process, the official SDK, real brains.

const execFileAsync = promisify(execFile);
const TOKEN = plantedSecret('ghp_restart_');
const VALUE = plantedSecret('sk-restart-');
/** serve refuses API keys under 32 characters. */
const SERVE_KEY = 'serve-key-restart-0123456789-0123456789';

let model: ModelServer;
let git: GitHttpServer;
let echo: { url: string; seen: { path: string; authorization?: string }[]; server: http.Server };
let gitRoot: string;
const children: ChildProcess[] = [];
const dataDir = tmpDir('corral-restart-data-');
const workRoot = tmpDir('corral-restart-work-');

type Msg = { role: string; content: string | { type: string; text?: string }[] };
/** The model runs what the latest user message says (`run: …`), then says done. */
function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as Msg[];
  const last = msgs[msgs.length - 1]!;
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  if (blocks.some((b) => b.type === 'tool_result')) return { blocks: [{ type: 'text', text: 'done' }] };
  const text = blocks.map((b) => b.text ?? '').join('');
  return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: /run: (.*)$/s.exec(text)![1]!, timeout_ms: 60_000 } }] };
}

const startServe = () =>
  startServeProcess({ dataDir, children, apiKey: SERVE_KEY, args: ['--work-root', workRoot, '--no-sandbox'], env: { ANTHROPIC_BASE_URL: model.url }, startMs: 60_000 });

type Ev = { id: string; type: string; [k: string]: any };
async function events(client: Anthropic, id: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(id)) out.push(e as Ev);
  return out;
}
/** Waits for the turn to end: the log ends with an idle, after `after` events. */
async function turnEnded(client: Anthropic, id: string, after: number): Promise<Ev[]> {
  for (let i = 0; i < 1200; i++) {
    const log = await events(client, id);
    if (log.length > after && log.at(-1)?.type === 'session.status_idle' && log.slice(after).some((e) => e.type === 'agent.message')) return log;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${id} did not finish its turn: ${(await events(client, id)).map((e) => e.type).join(' ')}`);
}
const outputOf = (log: Ev[]) => ((log.filter((e) => e.type === 'agent.tool_result').at(-1)?.content ?? []) as { text: string }[]).map((c) => c.text).join('');

beforeAll(async () => {
  ({ root: gitRoot, git } = await serveRepos(TOKEN, { prefix: 'corral-restart-' }));
  const seen: { path: string; authorization?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    res.end('echo-ok\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  echo = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
  model = await startModelServer(script);
}, 60_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  echo?.server.close();
  await git?.close();
  await model?.close();
});

describe('capabilities survive kill -9 of the host', () => {
  it('a resumed session still pulls and pushes through the git proxy and gets its environment_variable value added', async () => {
    let serve = await startServe();
    let client = serve.client;
    const vault = await client.beta.vaults.create({ display_name: 'restart' });
    await client.beta.vaults.credentials.create(vault.id, { display_name: 'repo', auth: { type: 'git_token', token: TOKEN, username: GIT_USER, repository_urls: [`${git.url}/proj.git`] } } as never);
    await client.beta.vaults.credentials.create(vault.id, {
      display_name: 'api',
      auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: VALUE, networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] } },
    } as never);
    const env = await client.beta.environments.create({ name: 'local', config: { type: 'local', sandbox: false } as never });
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const curl = (p: string) => `curl -s -H "Authorization: Bearer $API_TOKEN" ${echo.url}/${p}`;
    const s = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      vault_ids: [vault.id],
      resources: [{ type: 'github_repository', url: `${git.url}/proj.git`, mount_path: '/workspace/proj' }],
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: `run: cd proj && git pull --quiet origin main && cat README && ${curl('before')}` }] }],
    } as never);
    const before = await turnEnded(client, s.id, 0);
    expect(outputOf(before)).toContain('first');
    expect(echo.seen.find((e) => e.path === '/before')?.authorization).toBe(`Bearer ${VALUE}`);
    // Two more sessions that end before the kill (one deleted, one archived): their git remote and
    // egress proxy URL (capabilities) are kept here and tried after the restart.
    const ended: { remote: string; proxy: string }[] = [];
    for (const end of ['delete', 'archive'] as const) {
      const e = await client.beta.sessions.create({
        agent: agent.id,
        environment_id: env.id,
        vault_ids: [vault.id],
        resources: [{ type: 'github_repository', url: `${git.url}/proj.git`, mount_path: '/workspace/proj' }],
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run: cd proj && echo "remote=$(git remote get-url origin)" && echo "proxy=$HTTP_PROXY"' }] }],
      } as never);
      const out = outputOf(await turnEnded(client, e.id, 0));
      ended.push({ remote: /remote=(\S+)/.exec(out)![1]!, proxy: /proxy=(\S+)/.exec(out)![1]! });
      // Both work before the session ends (the control for the refusals below).
      // Not a synchronous child: the git server answering it runs in this process.
      expect((await execFileAsync('git', ['ls-remote', ended.at(-1)!.remote], { encoding: 'utf8', env: { PATH: process.env.PATH } })).stdout).toMatch(/refs\/heads\/main/);
      await (end === 'delete' ? client.beta.sessions.delete(e.id) : client.beta.sessions.archive(e.id));
    }

    await killServeHost(dataDir, serve.child);
    serve = await startServe();
    client = serve.client;

    const push = `echo after > after.txt && git add after.txt && git -c user.name=h -c user.email=h@h commit --quiet -m after-restart && git push --quiet origin HEAD:main && echo pushed`;
    await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: `run: cd proj && git pull --quiet origin main && ${push} && ${curl('after')}` }] }] });
    const after = await turnEnded(client, s.id, before.length);
    const out = outputOf(after);
    expect(out).toContain('pushed');
    expect(out).toContain('echo-ok');
    expect(await commitSubjects(gitRoot)).toContain('after-restart');
    expect(echo.seen.find((e) => e.path === '/after')?.authorization).toBe(`Bearer ${VALUE}`);
    // The clone from before the restart was kept (not cloned over) and its remote still goes through the proxy.
    const applied = after.slice(before.length).filter((e) => e.type === 'hand.resource_applied');
    expect(applied.at(-1)).toMatchObject({ cloned_on: 'an earlier provisioning (kept as it was)', git_remote: 'git proxy' });
    const used = after.slice(before.length).filter((e) => e.type === 'vault.credential_used').map((e) => e.purpose);
    expect(used).toContain('git');
    expect(used).toContain('egress');
    const log = JSON.stringify(after);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(VALUE);
    // The ended sessions' capabilities stay void after kill -9 and a new start.
    for (const e of ended) {
      const ls = await execFileAsync('git', ['ls-remote', e.remote], { encoding: 'utf8', env: { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0' } }).then(
        () => 'listed',
        (err: { stderr?: string }) => err.stderr ?? '',
      );
      expect(ls).toContain('403');
      const viaProxy = await execFileAsync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--proxy', e.proxy, `${echo.url}/ended`], { encoding: 'utf8' });
      expect(viaProxy.stdout).toBe('407');
    }
    expect(echo.seen.find((x) => x.path === '/ended')).toBeUndefined();
  }, 240_000);
});
