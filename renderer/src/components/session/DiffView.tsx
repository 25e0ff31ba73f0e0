import { structuredPatch } from 'diff';

/** An edit as diff hunks (computed with `diff`, drawn as text lines). */
export function DiffView({ path, before, after }: { path: string; before: string; after: string }) {
  const patch = structuredPatch(path, path, before, after, '', '', { context: 3 });
  return (
    <div className="diff" data-testid="diff" aria-label={`Changes to ${path}`}>
      {patch.hunks.map((h, k) => (
        <div key={k} className="hunk">
          <div className="hunk-head">
            @@ -{h.oldStart},{h.oldLines} +{h.newStart},{h.newLines} @@
          </div>
          {h.lines.map((line, j) => (
            <div key={j} className={line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx'}>
              {line}
            </div>
          ))}
        </div>
      ))}
      {patch.hunks.length === 0 && <p className="muted">No change.</p>}
    </div>
  );
}
