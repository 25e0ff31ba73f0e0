/**
 * What a browser holding a window session sends on the UI WebSocket: the session cookie (got
 * the real way, from a minted one-time link) and a same-origin `Origin`.
 */
export async function uiSessionHeaders(base: string, apiKey: string): Promise<{ cookie: string; origin: string }> {
  const minted = await fetch(`${base}/v1/corral/ui_link`, { method: 'POST', headers: { 'x-api-key': apiKey } });
  if (!minted.ok) throw new Error(`minting a link failed: ${minted.status} ${await minted.text()}`);
  const { url } = (await minted.json()) as { url: string };
  const res = await fetch(url, { redirect: 'manual' });
  const setCookie = res.headers.get('set-cookie');
  if (res.status !== 303 || !setCookie) throw new Error(`the link gave ${res.status} without a cookie`);
  return { cookie: setCookie.split(';')[0]!, origin: new URL(base).origin };
}
