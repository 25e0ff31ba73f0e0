import { expect, test, type Page } from '@playwright/test';
import { freshLink, newSession, rowsOf } from './helpers';
import { SLOW_REPLY } from './model-script';

/** What the list showed after one DOM change: the live rows, and the logged agent.message ids. */
interface Snapshot {
  live: { id: string; text: string; busy: string | null }[];
  messages: string[];
}

/**
 * Records the event list after every DOM change (a MutationObserver, so no state the page
 * shows is missed, however briefly) into `window.__snapshots`.
 */
async function recordList(page: Page): Promise<void> {
  await page.evaluate(() => {
    type El = { getAttribute(n: string): string | null; textContent: string | null; querySelector(s: string): El | null };
    const g = globalThis as unknown as {
      document: { querySelector(s: string): unknown; querySelectorAll(s: string): Iterable<El> };
      MutationObserver: new (cb: () => void) => { observe(target: unknown, opts: object): void };
      __snapshots: Snapshot[];
    };
    g.__snapshots = [];
    const snap = () => {
      const live = [...g.document.querySelectorAll('[data-testid="live-text"]')].map((row) => ({
        id: row.getAttribute('data-event-id') ?? '',
        text: row.querySelector('[data-testid="live-text-body"]')?.textContent ?? '',
        busy: row.getAttribute('aria-busy'),
      }));
      const messages = [...g.document.querySelectorAll('[data-testid="event-row"][data-type="agent.message"]')].map((row) => row.getAttribute('data-event-id') ?? '');
      g.__snapshots.push({ live, messages });
    };
    new g.MutationObserver(snap).observe(g.document.querySelector('[data-testid="event-list"]'), { subtree: true, childList: true, characterData: true, attributes: true });
    snap();
  });
}

const snapshots = (page: Page) => page.evaluate(() => (globalThis as unknown as { __snapshots: Snapshot[] }).__snapshots);

test('a reply being written shows as a live row that grows, then becomes the logged message without a gap or a double', async ({ page }, testInfo) => {
  const session = await newSession('live text', 'hello');
  await page.goto(`${await freshLink()}&session=${session.id}`);
  await expect(rowsOf(page, 'agent.message').first()).toContainText('echo: hello');
  await expect(rowsOf(page, 'session.status_idle')).toHaveCount(1);
  await expect(page.getByTestId('live-text')).toHaveCount(0);
  await recordList(page);

  // A piece every 800 ms: the row is seen growing however busy the machine is (at 60 ms the
  // three pieces the scripted model sends can reach the page in one batch).
  await page.getByTestId('message-input').fill('please write very slowly');
  await page.getByTestId('message-input').press('Enter');

  // Seen from the test: the row appears, marked as in progress, and its text grows.
  const liveRow = page.getByTestId('live-text');
  const liveBody = liveRow.getByTestId('live-text-body');
  await expect(liveRow).toHaveAttribute('aria-busy', 'true');
  await expect(liveBody).not.toHaveText('');
  const id = (await liveRow.getAttribute('data-event-id'))!;
  expect(id).toMatch(/^sevt_/);
  const early = (await liveBody.textContent())!;
  await expect.poll(async () => (await liveBody.textContent())?.length ?? 0).toBeGreaterThan(early.length);
  await testInfo.attach('live text', { body: await page.screenshot(), contentType: 'image/png' });

  // Then the logged message with the same id replaces it, with the full text.
  const logged = page.locator(`[data-testid="event-row"][data-event-id="${id}"]`);
  await expect(logged).toHaveAttribute('data-type', 'agent.message');
  await expect(logged).toContainText(SLOW_REPLY.slice(0, 60));
  await expect(liveRow).toHaveCount(0);
  await expect(rowsOf(page, 'session.status_idle')).toHaveCount(2);

  // Every state the list went through: the text only grew (at least twice, each a prefix of
  // the next), the live row and its logged row were never both shown, and never neither.
  const seen = await snapshots(page);
  const texts = seen.flatMap((s) => s.live.filter((l) => l.id === id).map((l) => l.text));
  const distinct = [...new Set(texts)].filter((t) => t !== '');
  expect(distinct.length).toBeGreaterThanOrEqual(2);
  for (let i = 1; i < distinct.length; i++) {
    expect(distinct[i]!.length).toBeGreaterThan(distinct[i - 1]!.length);
    expect(distinct[i]!.startsWith(distinct[i - 1]!)).toBe(true);
  }
  expect(SLOW_REPLY.replace(/\s+/g, ' ').startsWith(distinct[distinct.length - 1]!)).toBe(true);
  const first = seen.findIndex((s) => s.live.some((l) => l.id === id));
  expect(first).toBeGreaterThanOrEqual(0);
  for (const s of seen.slice(first)) {
    const live = s.live.filter((l) => l.id === id).length;
    const rows = s.messages.filter((m) => m === id).length;
    expect(live + rows).toBe(1);
  }
  expect(seen.every((s) => s.live.length <= 1 && s.live.every((l) => l.busy === 'true'))).toBe(true);

  // Live text is only a preview: a reload rebuilds the same view from the log.
  await page.reload();
  await expect(logged).toContainText(SLOW_REPLY.slice(0, 60));
  await expect(page.getByTestId('live-text')).toHaveCount(0);
});

test('after a dropped connection live text comes back whole; what was missed is never patched in with a gap', async ({ page }) => {
  // The page's WebSocket runs through this route, which can lose one piece of live text and
  // drop the line with it. The reply streams slowly enough (a piece every 800 ms) that the page
  // is back before the next piece; the host then replays the text so far, so the row shows the
  // reply's true beginning again, never a piece after a gap.
  let dropAtDelta = 0;
  let deltas = 0;
  let drops = 0;
  await page.routeWebSocket(/\/ui\/ws$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (dropAtDelta && typeof message === 'string' && message.includes('"event_delta"') && ++deltas === dropAtDelta) {
        dropAtDelta = 0;
        drops++;
        ws.close({ code: 4000, reason: 'dropped by the test' });
        server.close();
        return;
      }
      ws.send(message);
    });
  });
  const session = await newSession('live text, reconnect', 'hello');
  await page.goto(`${await freshLink()}&session=${session.id}`);
  await expect(rowsOf(page, 'session.status_idle')).toHaveCount(1);
  await recordList(page);

  dropAtDelta = 2;
  await page.getByTestId('message-input').fill('write very slowly, and lose the line');
  await page.getByTestId('message-input').press('Enter');
  await expect.poll(() => drops).toBe(1);
  // Back on the line, the live row is there again...
  await expect(page.getByTestId('live-text')).toHaveCount(1);
  // ...until the log brings the whole reply (watchEvents resumes after its last seq).
  await expect(rowsOf(page, 'agent.message')).toHaveCount(2);
  await expect(rowsOf(page, 'agent.message').nth(1)).toContainText(SLOW_REPLY.slice(0, 60));
  await expect(page.getByTestId('live-text')).toHaveCount(0);
  await expect(page.getByTestId('connection-status')).toHaveCount(0);
  const firstId = (await rowsOf(page, 'agent.message').nth(1).getAttribute('data-event-id'))!;

  // Whatever live text showed was a true beginning of the reply (no gap, nothing twice), and it
  // went on growing after the drop. It and its logged row were never both shown, never neither.
  const full = SLOW_REPLY.replace(/\s+/g, ' ');
  let seen = await snapshots(page);
  const texts = seen.flatMap((s) => s.live.filter((l) => l.id === firstId).map((l) => l.text));
  expect(texts.length).toBeGreaterThan(0);
  expect(texts.filter((t) => !full.startsWith(t)), `live text that is not a beginning of: ${full}`).toEqual([]);
  expect(new Set(texts.filter((t) => t !== '')).size).toBeGreaterThan(1);
  const from = seen.findIndex((s) => s.live.some((l) => l.id === firstId));
  for (const s of seen.slice(from)) expect(s.live.filter((l) => l.id === firstId).length + s.messages.filter((m) => m === firstId).length).toBe(1);

  // Live text was re-established with the connection: the next reply streams in again.
  await page.getByTestId('message-input').fill('write slowly once more');
  await page.getByTestId('message-input').press('Enter');
  await expect(rowsOf(page, 'agent.message')).toHaveCount(3);
  const secondId = (await rowsOf(page, 'agent.message').nth(2).getAttribute('data-event-id'))!;
  seen = await snapshots(page);
  const again = seen.flatMap((s) => s.live.filter((l) => l.id === secondId).map((l) => l.text)).filter((t) => t !== '');
  expect(again.length).toBeGreaterThan(0);
  expect(again.every((t) => full.startsWith(t))).toBe(true);
  expect(drops).toBe(1);
});
