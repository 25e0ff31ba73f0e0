/**
 * What the page's URL names: the selected session (`?session=<id>`), the position in it
 * (`&at=<seq>`), a slice (`&slice=<from>-<to>`) and the catalog page (`?view=agents`). A URL
 * can be shared and reloaded: the view opens where it names.
 */
export interface UrlState {
  session: string | null;
  at: number | null;
  slice: { from: number; to: number } | null;
  view: 'sessions' | 'agents' | 'environments' | 'vaults' | 'hands';
}

const int = (v: string | null) => (v !== null && /^\d+$/.test(v) ? Number(v) : null);

export function readUrl(loc: Location = window.location): UrlState {
  const q = new URLSearchParams(loc.search);
  const m = /^(\d+)-(\d+)$/.exec(q.get('slice') ?? '');
  const view = q.get('view');
  return {
    session: q.get('session') || null,
    at: int(q.get('at')),
    slice: m ? { from: Math.min(Number(m[1]), Number(m[2])), to: Math.max(Number(m[1]), Number(m[2])) } : null,
    view: view === 'agents' || view === 'environments' || view === 'vaults' || view === 'hands' ? view : 'sessions',
  };
}

/** The selected session, from the URL. */
export function sessionFromUrl(): string | null {
  return readUrl().session;
}

/** Changes the named parts of the URL (null removes one), without a history entry. */
export function writeUrl(parts: Partial<Record<'session' | 'at' | 'slice' | 'view', string | null>>): void {
  const url = new URL(window.location.href);
  for (const [k, v] of Object.entries(parts)) {
    if (v === null || v === undefined || v === '') url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  if (url.href === window.location.href) return;
  try {
    window.history.replaceState(window.history.state, '', url);
  } catch (err) {
    console.warn('corral: could not update the URL:', err);
  }
}

export function writeSessionToUrl(id: string | null): void {
  writeUrl({ session: id });
}
