/**
 * Checks that a value from an untrusted sender is plain JSON data of a sane size: null, booleans,
 * finite numbers, strings, arrays and plain objects only, nested at most `maxDepth` deep, and at
 * most about `maxChars` characters as JSON. Walks without recursing past the depth limit, so a
 * hostile value cannot exhaust the stack.
 */
export function isBoundedJson(value: unknown, maxChars: number, maxDepth: number): boolean {
  let budget = maxChars;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v === 'boolean') budget -= 5;
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
      budget -= 24;
    } else if (typeof v === 'string') budget -= v.length + 2;
    else if (typeof v === 'object') {
      if (depth >= maxDepth) return false;
      if (Array.isArray(v)) {
        budget -= 2 + v.length;
        for (const x of v) stack.push({ v: x, depth: depth + 1 });
      } else {
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) return false;
        const entries = Object.entries(v);
        budget -= 2 + entries.length;
        for (const [k, x] of entries) {
          budget -= k.length + 3;
          stack.push({ v: x, depth: depth + 1 });
        }
      }
    } else return false;
    if (budget < 0) return false;
  }
  return true;
}

/** True for a plain object that passes `isBoundedJson`. */
export function isBoundedJsonObject(value: unknown, maxChars: number, maxDepth: number): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && isBoundedJson(value, maxChars, maxDepth);
}
