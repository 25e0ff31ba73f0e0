import { useState, type FormEvent } from 'react';
import type { CorralApi, UiAgent } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';

const TOOLS = ['bash', 'edit', 'read', 'write', 'glob', 'grep', 'web_fetch', 'web_search'] as const;
type Policy = 'always_allow' | 'always_ask';
type ToolRow = { enabled: boolean; policy: Policy };

/** The agent's built-in toolset as rows (enabled, permission policy) per tool. */
function toolRows(agent: UiAgent | null): Record<string, ToolRow> {
  const set = agent?.tools.find((t) => t.type === 'agent_toolset_20260401');
  const rows: Record<string, ToolRow> = {};
  for (const name of TOOLS) {
    const c = set?.configs?.find((x) => x.name === name);
    // A new agent starts with every tool on, web_search and web_fetch too: the API's toolset default (enabled: true).
    const enabled = c?.enabled ?? set?.default_config?.enabled ?? (agent === null || !!set);
    rows[name] = { enabled, policy: (c?.permission_policy?.type ?? set?.default_config?.permission_policy?.type ?? 'always_allow') as Policy };
  }
  return rows;
}

/**
 * An agent's name, model, system prompt, limits and tools (each built-in tool on or off with
 * its permission policy; custom tools as JSON). The host checks it with the API's schema.
 */
export function AgentForm({ api, agent, onSaved, justSaved = false }: { api: CorralApi; agent: UiAgent | null; onSaved(a: UiAgent): void; justSaved?: boolean }) {
  const [name, setName] = useState(agent?.name ?? '');
  const [model, setModel] = useState(agent?.model.id ?? 'claude-sonnet-4-5');
  const [system, setSystem] = useState(agent?.system ?? '');
  const [maxTokens, setMaxTokens] = useState(typeof agent?.max_tokens === 'number' ? String(agent.max_tokens) : '');
  const [tools, setTools] = useState(() => toolRows(agent));
  const [custom, setCustom] = useState(() => JSON.stringify(agent?.tools.filter((t) => t.type === 'custom') ?? [], null, 2));
  const [error, setError] = useState<ClientError | null>(null);
  const [saved, setSaved] = useState(justSaved);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    let customTools: unknown[];
    try {
      customTools = custom.trim() ? (JSON.parse(custom) as unknown[]) : [];
    } catch {
      setError(toClientError(new Error('[invalid_input] custom tools: not valid JSON')));
      return;
    }
    if (!Array.isArray(customTools)) {
      setError(toClientError(new Error('[invalid_input] custom tools: a JSON list ([…]) of tools')));
      return;
    }
    if (maxTokens.trim() && !/^\d+$/.test(maxTokens.trim())) {
      setError(toClientError(new Error('[invalid_input] max tokens: a whole number')));
      return;
    }
    const toolset = {
      type: 'agent_toolset_20260401' as const,
      default_config: { enabled: false },
      configs: TOOLS.map((n) => ({ name: n, enabled: tools[n]!.enabled, permission_policy: { type: tools[n]!.policy } })),
    };
    const body = {
      name,
      model,
      system: system || null,
      ...(maxTokens.trim() ? { max_tokens: Number(maxTokens.trim()) } : {}),
      // The form does not edit MCP toolsets: they are kept as they are (with the agent's mcp_servers).
      tools: [toolset, ...customTools, ...(agent?.tools.filter((t) => t.type === 'mcp_toolset') ?? [])] as never,
    };
    try {
      const out = agent ? await api.updateAgent({ agentId: agent.id, update: { ...body, version: agent.version } }) : await api.createAgent(body);
      setSaved(true);
      onSaved(out);
    } catch (err) {
      setError(toClientError(err));
    }
  };

  return (
    <form className="catalog-form" onSubmit={(e) => void submit(e)} aria-label={agent ? `Agent ${agent.name}` : 'New agent'} data-testid="agent-form">
      <h3>{agent ? `${agent.name} (version ${agent.version})` : 'New agent'}</h3>
      <label className="field">
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </label>
      <label className="field">
        <span>Model</span>
        <input value={model} onChange={(e) => setModel(e.target.value)} required />
      </label>
      <label className="field">
        <span>System prompt</span>
        <textarea value={system} onChange={(e) => setSystem(e.target.value)} rows={4} />
      </label>
      <label className="field">
        <span>Max tokens per reply (optional)</span>
        <input inputMode="numeric" value={maxTokens} onChange={(e) => setMaxTokens(e.target.value)} />
      </label>
      <fieldset>
        <legend>Built-in tools</legend>
        <table className="tools-table">
          <tbody>
            {TOOLS.map((n) => (
              <tr key={n}>
                <td>
                  <label>
                    <input type="checkbox" checked={tools[n]!.enabled} onChange={(e) => setTools({ ...tools, [n]: { ...tools[n]!, enabled: e.target.checked } })} /> {n}
                  </label>
                </td>
                <td>
                  <select value={tools[n]!.policy} onChange={(e) => setTools({ ...tools, [n]: { ...tools[n]!, policy: e.target.value as Policy } })} aria-label={`Permission for ${n}`}>
                    <option value="always_allow">always allow</option>
                    <option value="always_ask">always ask</option>
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </fieldset>
      <label className="field">
        <span>Custom tools (JSON list)</span>
        <textarea value={custom} onChange={(e) => setCustom(e.target.value)} rows={3} className="mono" />
      </label>
      {error && <ErrorNote error={error} />}
      <div className="form-actions">
        <button type="submit" className="primary">
          {agent ? 'Save as a new version' : 'Create agent'}
        </button>
        {saved && <span role="status">Saved.</span>}
      </div>
    </form>
  );
}
