/** Fields every record has, which the text form shows in its own way (or not at all). */
const OWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/**
 * One pino JSON record as a line for a person at a terminal:
 * `12:03:04.120 INFO  request method=GET path=/v1/agents status=200 ms=3.1 req_id=req_…`.
 * An error's stack follows on its own lines. A line that is not JSON passes through.
 */
export function textLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 23) : '';
  const level = String(rec.level ?? '').toUpperCase().padEnd(5);
  const fields = Object.entries(rec)
    .filter(([k]) => !OWN.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  const err = rec.err as { message?: string; stack?: string } | undefined;
  const tail = err ? `\n${err.stack ?? err.message ?? ''}` : '';
  return `${time} ${level} ${String(rec.msg ?? '')}${fields.length ? ` ${fields.join(' ')}` : ''}${tail}\n`;
}
