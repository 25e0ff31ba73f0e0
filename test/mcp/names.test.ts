import { describe, expect, it } from 'vitest';
import { analyse } from '../../main/brain/analyse';
import { partOf } from '../../main/brain/transcript';
import { mcpModelToolName } from '../../main/mcp/names';
import type { LoggedEvent } from '../../main/session/types';

describe('MCP tool names and events in the brain', () => {
  it('names tools mcp__server__tool, within the API\'s alphabet and length, distinct when cut', () => {
    expect(mcpModelToolName('docs', 'search')).toBe('mcp__docs__search');
    const odd = mcpModelToolName('my server', 'do.it');
    expect(odd).toMatch(/^mcp__my_server__do_it_[0-9a-f]{8}$/);
    // Same characters after replacement, different names: the hash keeps them apart.
    expect(mcpModelToolName('a b', 'x')).not.toBe(mcpModelToolName('a_b', 'x'));
    const long = [mcpModelToolName('s', 'x'.repeat(200)), mcpModelToolName('s', `${'x'.repeat(199)}y`)];
    for (const n of long) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
    expect(long[0]).not.toBe(long[1]);
  });

  it('an mcp_tool_use is pending until its mcp_tool_result, and both replay as tool_use / tool_result', () => {
    const ev = (seq: number, e: Record<string, unknown>) => ({ id: `sevt_${seq}`, seq, processed_at: '', ...e }) as unknown as LoggedEvent;
    const use = ev(2, { type: 'agent.mcp_tool_use', name: 'search', mcp_server_name: 'docs', input: { q: 1 } });
    const log = [ev(1, { type: 'user.message', content: [{ type: 'text', text: 'hi' }] }), use];
    expect(analyse(log).unansweredToolUses.map((e) => e.id)).toEqual(['sevt_2']);
    const result = ev(3, { type: 'agent.mcp_tool_result', mcp_tool_use_id: 'sevt_2', content: [{ type: 'text', text: 'found' }], is_error: false });
    expect(analyse([...log, result]).unansweredToolUses).toEqual([]);
    expect(analyse([...log, result]).needsModel).toBe(true);
    expect(partOf(use)!.blocks).toEqual([{ type: 'tool_use', id: 'sevt_2', name: 'mcp__docs__search', input: { q: 1 } }]);
    expect(partOf(result)!.blocks[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'sevt_2', is_error: false });
  });
});
