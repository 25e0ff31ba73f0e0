import { describe, expect, it } from 'vitest';
import { analyse, hasWork } from '../../main/brain/analyse';
import { evaluateCall, permissionsOf } from '../../main/brain/permissions';
import type { LoggedEvent } from '../../main/session/types';

let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}, id = `sevt_${++seq}`): LoggedEvent => ({ id, type, seq, processed_at: '', ...fields }) as LoggedEvent;

describe('permission policies', () => {
  it('resolves a tool config over the toolset default over always_allow', () => {
    const p = permissionsOf([
      { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', permission_policy: { type: 'always_allow' } }] } as never,
    ]);
    const offered = new Set(['bash', 'read', 'read_session_events']);
    const own = new Set(['read_session_events']);
    expect(evaluateCall('bash', offered, p, own)).toEqual({ evaluated_permission: 'ask', evaluation: { type: 'always_ask' } });
    expect(evaluateCall('read', offered, p, own)).toEqual({ evaluated_permission: 'allow', evaluation: { type: 'always_allow' } });
    expect(evaluateCall('read_session_events', offered, p, own).evaluated_permission).toBe('allow');
    // Not offered (disabled or unknown): denied before any policy.
    expect(evaluateCall('write', offered, p, own)).toEqual({ evaluated_permission: 'deny' });
    expect(evaluateCall('bash', offered, permissionsOf([{ type: 'agent_toolset_20260401' }]), own).evaluated_permission).toBe('allow');
  });
});

describe('the log fold and calls held for the user', () => {
  const ask = ev('agent.tool_use', { name: 'bash', input: {}, evaluated_permission: 'ask' }, 'sevt_ask');
  const base = [ev('user.message'), ev('session.status_running'), ask, ev('session.status_idle', { stop_reason: { type: 'requires_action', event_ids: ['sevt_ask'] } })];

  it('waits with nothing to do until a confirmation', () => {
    const a = analyse(base);
    expect(a.awaitingConfirmation.map((e) => e.id)).toEqual(['sevt_ask']);
    expect(a.unansweredToolUses).toEqual([]);
    expect(a.needsModel).toBe(false);
    expect(hasWork(a)).toBe(false);
  });

  it('takes a confirmed call up once; after a started run it is an unknown outcome', () => {
    const confirmed = [...base, ev('user.tool_confirmation', { tool_use_id: 'sevt_ask', result: 'allow' })];
    const a = analyse(confirmed);
    expect(a.confirmedToolUses.map((c) => c.use.id)).toEqual(['sevt_ask']);
    expect(hasWork(a)).toBe(true);
    const started = analyse([...confirmed, ev('session.status_running', { run_confirmed: 'sevt_ask' })]);
    expect(started.confirmedToolUses).toEqual([]);
    expect(started.unansweredToolUses.map((e) => e.id)).toEqual(['sevt_ask']);
  });

  it('an interrupt while waiting is pending even though the session is idle', () => {
    expect(analyse([...base, ev('user.interrupt')]).interruptPending).toBeDefined();
  });
});
