/**
 * Deepest nesting a request body may have. JSON.parse copes with any depth, but JSON.stringify,
 * zod and structured clone recurse, and a few thousand levels overflow the stack (a RangeError
 * that used to surface as a 500 when storing an agent). Real bodies, JSON Schemas included, stay
 * far below this.
 */
export const MAX_JSON_DEPTH = 100;

/** Whether a parsed JSON value nests objects/arrays deeper than `max` (walked without recursion). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
