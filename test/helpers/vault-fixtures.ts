import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { HostOptions } from '../../main/host';
import type { LoggedEvent } from '../../main/session/types';
import type { AuthCreate } from '../../main/vault/kinds';
import { makeCa, makeLeafKey, mintServerCert } from '../../main/vault/x509';
import { startGitHttpServer, type GitHttpServer } from '../fixtures/git-http-server';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from './brain-host';
import { tmpDir } from './tmp';

/**
 * What the vault's end-to-end tests (test/vault/*-proxy*.test.ts, adb-proxies, sandbox-vault,
 * restart, hostile-vault) set up alike: planted secrets, repositories behind a git server that
 * wants a token, echo servers that record what reached them, a host with a vault, and sessions
 * whose model runs one command on a hand.
 */

const execFileAsync = promisify(execFile);
const rnd = () => Math.random().toString(36).slice(2);

/** A secret to plant: `prefix` and about 20 random characters, so that a search for it finds only copies of it. */
export const plantedSecret = (prefix: string): string => `${prefix}${rnd()}${rnd()}`;

/**
 * A secret as a shell word that is not its text: a command holding the text would be redacted in
 * the log, and a search for the secret on the hand would find the command itself.
 */
export const shellWord = (v: string): string => `'${v.slice(0, 5)}''${v.slice(5)}'`;

/** The user the test git server wants with its token. */
export const GIT_USER = 'corral-bot';

/** An environment in which git commits without asking who is committing. */
export const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** Repositories served over HTTP by a git server that wants GIT_USER and a token. */
export interface ServedRepos {
  /** The folder of the bare repositories (`<root>/<name>.git`), to read what was pushed. */
  root: string;
  git: GitHttpServer;
}

/**
 * Makes a bare repository of each of `repos` (names with `.git`) in a new folder, each holding
 * the same first commit (a README with `readme`), and serves them, wanting `token`.
 */
export async function serveRepos(token: string, opts: { prefix: string; repos?: string[]; readme?: string }): Promise<ServedRepos> {
  const root = tmpDir(`${opts.prefix}git-`);
  const work = tmpDir(`${opts.prefix}seed-`);
  const repos = opts.repos ?? ['proj.git'];
  const g = (cwd: string, ...args: string[]) => execFileAsync('git', args, { cwd, env: gitEnv });
  for (const repo of repos) await g(root, 'init', '--quiet', '--bare', '-b', 'main', repo);
  await g(work, 'init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(work, 'README'), opts.readme ?? 'first\n');
  await g(work, 'add', '.');
  await g(work, 'commit', '--quiet', '-m', 'one');
  for (const repo of repos) await g(work, 'push', '--quiet', path.join(root, repo), 'main');
  return { root, git: await startGitHttpServer(root, GIT_USER, token) };
}

/** The subjects of the commits on `main` of a served repository (`proj.git`), newest first. */
export async function commitSubjects(root: string, repo = 'proj.git'): Promise<string> {
  return (await execFileAsync('git', ['--git-dir', path.join(root, repo), 'log', '--format=%s', 'main'])).stdout;
}

/** A request an echo server got. */
export interface SeenRequest {
  path: string;
  authorization?: string;
  body: string;
}

/** A server that answers `ok <host>` and records every request. */
export interface EchoServer {
  url: string;
  seen: SeenRequest[];
  server: http.Server;
}

/** An echo server on `host`; HTTPS with `tls` (a certificate of the test's own upstream CA). */
export async function startEcho(host: string, tls?: { key: string; cert: string }): Promise<EchoServer> {
  const seen: SeenRequest[] = [];
  const server = (tls ? https.createServer.bind(null, tls) : http.createServer)((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: Buffer.concat(parts).toString('utf8') });
      res.end(`ok ${host}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `${tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`, seen, server };
}

/** A CA of the test's own for HTTPS upstreams: the host's egress proxy is told to trust it, nothing else does. */
export interface UpstreamCa {
  certPem: string;
  /** A key and a certificate of this CA for `host`, for startEcho. */
  tlsFor(host: string): Promise<{ key: string; cert: string }>;
}

export async function makeUpstreamCa(name: string): Promise<UpstreamCa> {
  const ca = await makeCa(name);
  const leaf = await makeLeafKey();
  return { certPem: ca.certPem, tlsFor: async (host) => ({ key: leaf.keyPem, cert: await mintServerCert(ca, leaf.spki, host) }) };
}

/** The model's script: it runs with bash the command its user message names (`run: …`), then stops. */
export function runNamedCommand(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command, timeout_ms: 60_000 } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

/** A host whose brains run the command named (runNamedCommand), with one vault. */
export interface VaultHost {
  t: BrainTestHost;
  vaultId: string;
}

export async function startVaultHost(vaultName: string, hostOptions: Partial<HostOptions>): Promise<VaultHost> {
  const t = await startBrainHost(runNamedCommand, { hostOptions });
  await t.host.started;
  return { t, vaultId: t.host.vault.createVault({ display_name: vaultName }).id };
}

/** Puts a git_token credential for `repoUrl` in the vault (named `proj`). */
export async function addGitToken(v: VaultHost, token: string, repoUrl: string): Promise<void> {
  await v.t.host.vault.createCredential(v.vaultId, { display_name: 'proj', auth: { type: 'git_token', token, username: GIT_USER, repository_urls: [repoUrl] } });
}

/** Puts an environment_variable credential in the vault, its value for `hosts` only; returns its id. */
export async function addEnvVariable(
  v: VaultHost,
  c: { display_name: string; name: string; value: string; hosts: string[]; injection_location?: { body?: boolean; header?: boolean } },
): Promise<string> {
  const auth: AuthCreate = {
    type: 'environment_variable',
    secret_name: c.name,
    secret_value: c.value,
    networking: { type: 'limited', allowed_hosts: c.hosts },
    ...(c.injection_location ? { injection_location: c.injection_location } : {}),
  };
  return (await v.t.host.vault.createCredential(v.vaultId, { display_name: c.display_name, auth })).id;
}

/**
 * Opens a loopback address to the egress proxy: it refuses loopback unless a credential names
 * the address, so this one (OTHER_TOKEN) does; the tests never send its value there.
 */
export async function openLoopbackHost(v: VaultHost, host: string): Promise<void> {
  await addEnvVariable(v, { display_name: 'other', name: 'OTHER_TOKEN', value: plantedSecret('other-'), hosts: [host] });
}

/** A session's events and the output of its one tool call. */
export interface CommandRun {
  id: string;
  events: LoggedEvent[];
  out: string;
}

/**
 * Runs `command` on a hand of a new environment (`name`, `config`) in a session with the vault,
 * and with `repoUrl` cloned to /workspace/proj when given; waits for the session to settle.
 */
export async function runInSession(v: VaultHost, s: { name: string; config: Record<string, unknown>; command: string; repoUrl?: string }): Promise<CommandRun> {
  const env = v.t.host.environments.create({ name: s.name, config: s.config, metadata: {}, description: null });
  const { session } = v.t.host.log.createSession({
    environment_id: env.id,
    record: {
      agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
      vault_ids: [v.vaultId],
      ...(s.repoUrl ? { resources: [{ id: 'sesrsc_1', type: 'github_repository', url: s.repoUrl, mount_path: '/workspace/proj' }] } : {}),
    },
  });
  v.t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${s.command}` }] });
  const events = await v.t.settled(session.id, 120_000);
  return { id: session.id, events, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}
