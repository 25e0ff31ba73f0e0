/**
 * The persistent bash as a model meets it, the same on every kind of hand (local, SSH,
 * container, adb): cd, export and a background job survive to the next call; a syntax error runs
 * nothing and loses nothing; an abort and a
 * timeout stop only the running command and the shell lives on; a command that ignores SIGINT
 * gets the shell killed and the next result says its state was lost.
 */
import { expect } from 'vitest';
import type { Hand } from '../../main/hands/types';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the scenario on `hand`, whose work folder is `workDir`; `tag` keeps its sleeps apart from other runs'. */
export async function persistentBashScenario(hand: Hand, workDir: string, tag: number): Promise<void> {
  const bash = (command: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) => hand.execute('bash', { command, ...extra }, { signal });
  const bg = 3600 + tag;
  // 1. State survives between calls.
  let r = await bash(`cd /tmp && export FOO=kept-${tag}; sleep ${bg} >/dev/null 2>&1 & bgpid=$!; echo started`);
  expect(r.content).toBe('started\n[exit code 0]');
  // (busybox sh lists an eval'd job without its command text.)
  r = await bash('pwd; echo "$FOO"; kill -0 "$bgpid" && echo job-alive; jobs');
  expect(r.content).toMatch(new RegExp(`^/tmp\\nkept-${tag}\\njob-alive\\n\\[1\\][+ ]+Running\\b.*\\n\\[exit code 0\\]$`));

  // 1b. A syntax error anywhere in a command runs none of it, and the shell reads on; a
  // here-document and several lines run whole.
  r = await bash(`echo ran > /tmp/corral-syntax-${tag}\nif then`);
  expect(r.content).toMatch(/\[exit code 2\]$/);
  r = await bash(`test -e /tmp/corral-syntax-${tag} && echo first-line-ran || echo nothing-ran; echo "$FOO"`);
  expect(r.content).toBe(`nothing-ran\nkept-${tag}\n[exit code 0]`);
  r = await bash('n=2\ncat <<EOF\nline $n\nEOF\necho done');
  expect(r.content).toBe('line 2\ndone\n[exit code 0]');

  // 2. An abort stops the running command and the rest of its line; the shell keeps its state.
  const ac = new AbortController();
  const call = bash(`sleep ${bg + 100}; echo after > /tmp/corral-after-${tag}`, {}, ac.signal);
  await sleep(800);
  ac.abort();
  r = await call;
  expect(r.isError).toBe(true);
  expect(r.content).toMatch(/^\[interrupted: the call was aborted after [\d,]+ ms; the command was stopped with SIGINT \(exit code \d+\); the shell and its state are kept\]$/);
  r = await bash(`pwd; echo "$FOO"; test -e /tmp/corral-after-${tag} && echo after-ran || echo after-not-run; kill -0 "$bgpid" && echo job-alive`);
  expect(r.content).toBe(`/tmp\nkept-${tag}\nafter-not-run\njob-alive\n[exit code 0]`);

  // 3. A timeout does the same.
  r = await bash(`echo before; sleep ${bg + 200}`, { timeout_ms: 500 });
  expect(r.content).toMatch(/^before\n\[timed out after 500 ms; the command was stopped with SIGINT \(exit code \d+\); the shell and its state are kept\]$/);
  r = await bash('echo "$FOO"');
  expect(r.content).toBe(`kept-${tag}\n[exit code 0]`);

  // 4. A command that ignores SIGINT: the shell is killed, the next call says its state is gone.
  r = await bash(`trap '' INT; sleep ${bg + 300}`, { timeout_ms: 500 });
  expect(r.content).toMatch(/^\[timed out after 500 ms; the command did not stop on SIGINT, so the shell was killed/);
  r = await bash('pwd; echo "[$FOO]"; jobs');
  expect(r.content).toBe(`[a fresh shell: the previous command ignored SIGINT, so its shell was killed; its working folder, variables and background jobs are gone]\n${workDir}\n[]\n[exit code 0]`);
  // The old shell's background job went with it.
  r = await bash(`ps -o args 2>/dev/null | grep -c '^sleep ${bg}$' || ps | grep -c 'sleep ${bg}$'`);
  expect(r.content).toMatch(/^0\n/);
}
