import { expect, test, type Page } from '@playwright/test';
import { baseURL, freshLink, newSession, rowsOf } from './helpers';

/**
 * Routes the page's UI socket through Playwright so a test can drop the connection (the page
 * then reconnects on its own) and let it come back.
 */
async function socketGate(page: Page) {
  let up = true;
  const open = new Set<{ close(o?: { code?: number }): Promise<void> }>();
  await page.routeWebSocket(/\/ui\/ws/, (ws) => {
    if (!up) return void ws.close({ code: 1006 });
    ws.connectToServer();
    open.add(ws);
  });
  return {
    drop() {
      up = false;
      for (const ws of open) void ws.close({ code: 1006 }).catch(() => {});
      open.clear();
    },
    restore() {
      up = true;
    },
  };
}

test('text typed while a message waits for the connection is kept when it is sent', async ({ page }) => {
  const session = await newSession('composer draft', 'hello before the drop');
  await page.goto(await freshLink());
  const gate = await socketGate(page);
  await page.goto(`${baseURL}/?session=${session.id}`);
  await expect(rowsOf(page, 'agent.message').first()).toBeVisible({ timeout: 20_000 });

  gate.drop();
  await expect(page.getByText('Connection lost; reconnecting…')).toBeVisible();
  const input = page.getByTestId('message-input');
  await input.fill('sent while offline');
  await input.press('Enter');
  await expect(page.getByTestId('send-button')).toHaveText('Sending…');
  // The box stays editable: the user goes on writing the next message.
  await input.fill('sent while offline\nand the next thought');

  gate.restore();
  await expect(rowsOf(page, 'user.message').filter({ hasText: 'sent while offline' })).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId('send-button')).toHaveText('Send');
  await expect(input).toHaveValue('and the next thought');
});
