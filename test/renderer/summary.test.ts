import { describe, expect, it } from 'vitest';
import type { UiEvent } from '../../main/api/ui/contract';
import { handOf } from '../../renderer/src/lib/rows';
import { summarise } from '../../renderer/src/lib/summary';

let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): UiEvent => ({ id: `sevt_${++seq}`, type, processed_at: '2026-01-01T00:00:00.000Z', seq, ...fields });

describe('event summaries', () => {
  it('tool calls read as name(key args)', () => {
    expect(summarise(ev('agent.tool_use', { name: 'bash', input: { command: 'ls -la\necho done' } })).text).toBe('bash(ls -la …)');
    expect(summarise(ev('agent.tool_use', { name: 'bash', input: { command: `echo ${'x'.repeat(200)}` } })).text).toMatch(/^bash\(echo x+…\)$/);
    expect(summarise(ev('agent.tool_use', { name: 'read', input: { file_path: 'src/a.ts', view_range: [10, -1] } })).text).toBe('read(src/a.ts:10-end)');
    expect(summarise(ev('agent.tool_use', { name: 'write', input: { file_path: 'hello.txt', content: 'hi' } })).text).toBe('write(hello.txt)');
    expect(summarise(ev('agent.tool_use', { name: 'grep', input: { pattern: 'TODO', path: 'src' } })).text).toBe('grep(/TODO/ in src)');
    expect(summarise(ev('agent.tool_use', { name: 'bash', input: { command: 'uptime', hand: 'pi' } })).text).toBe('bash(uptime) on pi');
    expect(summarise(ev('agent.custom_tool_use', { name: 'lookup', input: { q: 'weather', n: 3 } })).text).toBe('lookup(q: weather, n: 3)');
    // A server tool's call says who ran it, and concerns no hand.
    const search = ev('agent.tool_use', { name: 'web_search', input: { query: 'corral' }, server_block: { type: 'server_tool_use' } });
    expect(summarise(search)).toMatchObject({ text: 'web_search(query: corral)', note: 'run by the model provider' });
    expect(handOf(search)).toBeNull();
    expect(summarise(ev('agent.tool_use', { name: 'bash', input: { command: 'ls' } })).note).toBeUndefined();
  });

  it('tool results: the first line, an exit badge, more lines and the duration', () => {
    const ok = summarise(ev('agent.tool_result', { content: [{ type: 'text', text: 'hello\nworld\n[exit code 0]' }], is_error: false, details: { exit_code: 0, duration_ms: 12 } }));
    expect(ok).toEqual({ text: 'hello', badge: { text: 'exit 0', tone: 'ok' }, note: '+1 line · 12 ms', tone: undefined });
    const failed = summarise(ev('agent.tool_result', { content: [{ type: 'text', text: '\nboom\n[exit code 2]' }], is_error: true, details: { exit_code: 2 } }));
    expect(failed).toMatchObject({ text: 'boom', badge: { text: 'exit 2', tone: 'error' }, tone: 'error' });
    expect(summarise(ev('agent.tool_result', { content: [{ type: 'text', text: '[exit code 0]' }], details: { exit_code: 0 } })).text).toBe('(no output)');
    expect(summarise(ev('agent.tool_result', { content: [{ type: 'text', text: 'Wrote 3 bytes' }], is_error: false })).badge).toBeUndefined();
  });

  it('provisioning progress and the warm pool read as steps of the hand', () => {
    expect(summarise(ev('hand.provisioning_progress', { hand: 'main', phase: 'connecting' })).text).toBe('Hand main: connecting…');
    expect(
      summarise(ev('hand.provisioning_progress', { hand: 'main', phase: 'cloning', url: 'file:///r', stage: 'Receiving objects', objects: { done: 1350, total: 3000 }, percent: 45 })).text,
    ).toBe('Hand main: cloning — file:///r · Receiving objects · 1,350/3,000 objects · 45%');
    expect(summarise(ev('hand.taken_from_pool', { hand: 'main', provisioned_ms: 2500, repositories_ready: 1 }))).toMatchObject({
      text: 'Hand main: a hand made ahead (in 2.5 s) taken from the pool',
      note: '1 repository already there',
    });
    expect(summarise(ev('hand.resource_applied', { hand: 'main', url: 'file:///r', path: 'repo', pre_applied: true }))).toMatchObject({ text: 'Hand main: file:///r was already cloned into repo', note: 'made ahead, in the pool' });
  });

  it('a local hand without a sandbox says so with an error badge; a sandboxed one does not', () => {
    const off = summarise(ev('hand.ready', { hand: 'main', kind: 'local', description: 'this machine', sandbox: { enabled: false, reason: 'bwrap is not installed', on_purpose: false } }));
    expect(off.badge).toEqual({ text: 'not sandboxed: bwrap is not installed', tone: 'error' });
    expect(summarise(ev('hand.ready', { hand: 'main', kind: 'local', sandbox: { enabled: true, network: 'none' } })).badge).toBeUndefined();
    expect(summarise(ev('hand.ready', { hand: 'pi', kind: 'ssh' })).badge).toBeUndefined();
  });

  it('hand events name the hand', () => {
    expect(summarise(ev('hand.provisioning', { hand: 'main', kind: 'ssh' })).text).toBe('Hand main: provisioning (ssh)…');
    expect(summarise(ev('hand.ready', { hand: 'main', kind: 'local', description: 'this machine', duration_ms: 1500 })).text).toBe('Hand main ready in 1.5 s · local · this machine');
    expect(summarise(ev('hand.lost', { hand: 'pi', reason: 'connection reset' }))).toMatchObject({ text: 'Hand pi lost: connection reset', tone: 'error' });
    expect(summarise(ev('hand.ready', { hand: 'pi', kind: 'ssh', host_key: { fingerprint: 'SHA256:abc', known: false, first_seen: true } })).note).toBe('new host key SHA256:abc remembered');
    expect(summarise(ev('hand.ready', { hand: 'pi', kind: 'ssh', host_key: { fingerprint: 'SHA256:abc', known: true, first_seen: false } })).note).toBeUndefined();
    expect(summarise(ev('hand.resource_applied', { hand: 'main', url: 'https://x/r.git', path: 'r', cloned_on: 'this machine' }))).toMatchObject({ text: 'Hand main: https://x/r.git cloned into r', note: 'on this machine' });
    expect(summarise(ev('hand.resource_failed', { hand: 'main', url: 'https://x/r.git', error: 'exit code 128' }))).toMatchObject({ text: 'Hand main: could not clone https://x/r.git: exit code 128', tone: 'error' });
    expect(summarise(ev('hand.attached', { hand: 'pi', environment_id: 'env_1' })).text).toBe('Hand pi attached (environment env_1)');
    expect(summarise(ev('hand.released', { hand: 'pi' })).text).toBe('Hand pi released');
    expect(summarise(ev('hand.handed_over', { hand: 'pi', to_session_id: 'sesn_2', to_hand: 'board' })).text).toBe('Hand pi handed over to sesn_2 as board');
    expect(summarise(ev('hand.received', { hand: 'board', from_session_id: 'sesn_1', from_hand: 'pi' })).text).toBe('Hand board received from sesn_1 (was pi)');
  });

  it('errors, retries and model requests', () => {
    const err = summarise(ev('session.error', { error: { type: 'overloaded_error', message: 'Overloaded', retry_status: { type: 'exhausted' } } }));
    expect(err).toMatchObject({ text: 'overloaded_error: Overloaded', tone: 'error', badge: { text: 'exhausted', tone: 'error' } });
    expect(summarise(ev('session.status_rescheduled', { attempt: 2, retry_in_ms: 4000, error_type: 'rate_limit_error' })).text).toBe('retry 2 in 4.0 s after rate_limit_error');
    const end = summarise(ev('span.model_request_end', { is_error: false, model_usage: { input_tokens: 12345, output_tokens: 67, cache_read_input_tokens: 0 }, stop_reason: 'end_turn' }));
    expect(end).toMatchObject({ text: 'in 12,345 · out 67 · cache read 0', note: 'stop: end_turn' });
    const bad = summarise(ev('span.model_request_end', { is_error: true, model_usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 }, error: { type: 'api_error', message: 'stream cut' } }));
    expect(bad).toMatchObject({ text: 'failed: api_error: stream cut', tone: 'error' });
  });

  it('messages stay one line, and odd events do not throw', () => {
    expect(summarise(ev('agent.message', { content: [{ type: 'text', text: 'a\n\nb' }] })).text).toBe('a b');
    expect(summarise(ev('agent.message', { content: [{ type: 'text', text: 'x'.repeat(1000) }] })).text.length).toBe(300);
    for (const type of ['agent.tool_use', 'agent.tool_result', 'hand.ready', 'session.error', 'span.model_request_end', 'x.y']) {
      expect(() => summarise(ev(type, { input: null, content: 5, details: 'no', error: null, model_usage: null }))).not.toThrow();
    }
  });
});
