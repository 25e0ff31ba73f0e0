import { expect, test } from '@playwright/test';
import { baseURL, freshLink, newSession, rowsOf } from './helpers';

test('Space presses a focused button instead of starting playback; elsewhere it still plays', async ({ page }) => {
  const session = await newSession('space on a button', 'hello keys');
  await page.goto(await freshLink());
  await page.goto(`${baseURL}/?session=${session.id}`);
  await expect(rowsOf(page, 'session.status_idle').first()).toBeVisible({ timeout: 20_000 });

  const slice = page.getByRole('tab', { name: 'Slice' });
  await slice.focus();
  await page.keyboard.press('Space');
  await expect(slice).toHaveAttribute('aria-selected', 'true');
  // The view stayed live: no playback started from the first event.
  await expect(page.getByTestId('go-live')).toHaveAttribute('aria-pressed', 'true');
  expect(new URL(page.url()).searchParams.get('at')).toBeNull();

  // On the timeline itself, Space plays.
  await page.getByRole('listbox').first().focus();
  await page.keyboard.press('Space');
  await expect(page.getByTestId('go-live')).toHaveAttribute('aria-pressed', 'false');
});
