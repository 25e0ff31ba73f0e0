import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ToolOutcome } from '../../main/hands/types';
import { startTestServer, type TestServer } from './server';

/**
 * A host serving HTTP with two sessions on local hands: `searcher`, whose work folder holds a
 * large tree of small text files, and `other`, a session going about its business. Used to show
 * that one session's big search does not stall the rest (test/hands/event-loop.test.ts,
 * `npm run bench:loop`).
 */
export interface SearchScenario {
  server: TestServer;
  searcher: string;
  other: string;
  /** The searcher's work folder (real path), holding the tree. */
  workDir: string;
  tree: TreeFacts;
  /** Runs a tool on the searcher's hand, through the registry as a brain's call would. */
  call(tool: string, input: Record<string, unknown>): Promise<ToolOutcome>;
  /** Probe calls that throw when the answer is wrong: `other`'s bash round trip, and `GET /v1/sessions`. */
  probes: { roundTrip: () => Promise<void>; listSessions: () => Promise<void> };
  close(): Promise<void>;
}

/** What the tree holds, for checking search results. */
export interface TreeFacts {
  files: number;
  /** The pattern that matches exactly the needle lines. */
  needlePattern: string;
  /** grep's expected output for it: `path:line:text`, sorted by path. */
  needleLines: string[];
}

const BODY = 'export const value = 1;\n// an ordinary line of text for the search to read\n'.repeat(3);
/** One file in this many carries a needle line. */
const NEEDLE_EVERY = 1000;

/**
 * Writes `files` (a multiple of 1000) small text files as dNNN/eN/fNNN.txt: 10 folders of 100
 * files under each of files/1000 top folders. Synchronous writes: a few seconds for 100k.
 */
export function buildTree(root: string, files: number): TreeFacts {
  if (files % 1000 !== 0) throw new Error('buildTree: files must be a multiple of 1000');
  const needleLines: string[] = [];
  let i = 0;
  for (let a = 0; a < files / 1000; a++) {
    for (let b = 0; b < 10; b++) {
      const rel = `d${String(a).padStart(3, '0')}/e${b}`;
      fs.mkdirSync(path.join(root, rel), { recursive: true });
      for (let c = 0; c < 100; c++, i++) {
        const file = `${rel}/f${String(c).padStart(3, '0')}.txt`;
        const needle = i % NEEDLE_EVERY === 500 ? `// NEEDLE_${i} is here\n` : '';
        fs.writeFileSync(path.join(root, file), BODY + needle);
        if (needle) needleLines.push(`${file}:7:${needle.trimEnd()}`);
      }
    }
  }
  return { files, needlePattern: 'NEEDLE_\\d+ is', needleLines: needleLines.sort() };
}

export async function startSearchScenario(opts: { files: number }): Promise<SearchScenario> {
  // The tree goes on tmpfs where there is one: written in seconds, and searched without waiting
  // on a disk other work shares (which would only make the old, blocking search look worse).
  // Outside the host's work root, so the host is told it may be a working_dir.
  const treeDir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'corral-tree-'));
  const server = await startTestServer({ allowedWorkRoots: [treeDir] });
  const { host } = server;
  const local = host.environments.create({ name: 'local', config: { type: 'local' }, metadata: {}, description: null });
  const onTree = host.environments.create({ name: 'tree', config: { type: 'local', working_dir: treeDir }, metadata: {}, description: null });
  const newSession = (title: string, env: { id: string }) =>
    host.log.createSession(
      {
        environment_id: env.id,
        record: {
          agent: { type: 'agent', id: 'agent_test', version: 1, name: 'tester', model: { id: 'claude-test' }, system: null, tools: [] },
          title,
          metadata: {},
          resources: [],
          vault_ids: [],
        },
      },
      [],
    ).session.id;
  const searcher = newSession('searcher', onTree);
  const other = newSession('other', local);
  const workDir = fs.realpathSync(treeDir);
  const tree = buildTree(workDir, opts.files);

  const roundTrip = async () => {
    const out = await host.hands.execute(other, undefined, 'bash', { command: 'echo hi' });
    if (out.content !== 'hi\n[exit code 0]') throw new Error(`bash round trip answered: ${out.content}`);
  };
  const listSessions = async () => {
    const res = await fetch(`${server.server.url}/v1/sessions`, { headers: { 'x-api-key': server.apiKey } });
    const body = (await res.json()) as { data?: { id: string }[] };
    const ids = body.data?.map((s) => s.id) ?? [];
    if (res.status !== 200 || !ids.includes(searcher) || !ids.includes(other)) throw new Error(`GET /v1/sessions answered ${res.status}: ${JSON.stringify(body).slice(0, 200)}`);
  };
  // Provision both hands (and start a search worker) before anything is measured.
  await roundTrip();
  await host.hands.execute(searcher, undefined, 'glob', { pattern: '*.txt', path: 'd000/e0' });

  return {
    server,
    searcher,
    other,
    workDir,
    tree,
    call: (tool, input) => host.hands.execute(searcher, undefined, tool, input),
    probes: { roundTrip, listSessions },
    async close() {
      await server.close();
      await fs.promises.rm(treeDir, { recursive: true, force: true });
      await fs.promises.rm(host.dataDir, { recursive: true, force: true });
    },
  };
}
