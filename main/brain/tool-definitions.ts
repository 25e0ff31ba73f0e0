import type { HandInfo } from '../hands/registry';
import { BUILTIN_TOOL_DEFINITIONS, type ToolDefinition } from '../hands/tools/definitions';

/**
 * The definitions the model gets for the built-in tools. With one hand they are the tools as
 * they are; with several, each takes a `hand` argument and says which hands there are.
 */
export function builtinToolDefinitions(enabled: readonly string[], hands: readonly HandInfo[]): ToolDefinition[] {
  const base = new Map<string, ToolDefinition>(BUILTIN_TOOL_DEFINITIONS.map((d) => [d.name, d]));
  for (const h of hands) for (const extra of h.extraTools) if (!base.has(extra.name)) base.set(extra.name, extra);
  const names = [...enabled, ...[...base.keys()].filter((n) => !BUILTIN_TOOL_DEFINITIONS.some((d) => d.name === n))];
  const defs: ToolDefinition[] = [];
  for (const name of names) {
    const def = base.get(name);
    const holders = hands.filter((h) => h.tools.includes(name));
    if (!def || holders.length === 0) continue;
    if (hands.length <= 1) {
      // What the model must know about where its commands run (sandboxed or not) goes with bash.
      const notice = name === 'bash' ? hands[0]?.notice : undefined;
      defs.push(notice ? { ...def, description: `${def.description}\n\n${notice}` } : def);
      continue;
    }
    const list = holders.map((h) => `${h.name}: ${h.description}`).join('; ');
    const schema = def.input_schema;
    defs.push({
      ...def,
      description: `${def.description}\n\nThis session holds several hands; say which with "hand" (${list}).`,
      input_schema: {
        ...schema,
        properties: { ...schema.properties, hand: { type: 'string', enum: holders.map((h) => h.name), description: `Which hand runs it: ${list}` } },
        required: [...(schema.required ?? []), 'hand'],
      },
    });
  }
  return defs;
}
