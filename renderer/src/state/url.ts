/** The selected session lives in the page's URL as `?session=<id>`. */
export function sessionFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('session') || null;
}

export function writeSessionToUrl(id: string | null): void {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set('session', id);
  else url.searchParams.delete('session');
  if (url.href === window.location.href) return;
  try {
    window.history.replaceState(window.history.state, '', url);
  } catch (err) {
    console.warn('corral: could not update the URL:', err);
  }
}
