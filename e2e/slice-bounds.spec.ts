import { expect, test } from '@playwright/test';
import { baseURL, freshLink, newSession, rowsOf } from './helpers';

test("a slice bound's field can be emptied and typed afresh", async ({ page }) => {
  const session = await newSession('slice bounds', 'hello slice');
  await page.goto(await freshLink());
  await page.goto(`${baseURL}/?session=${session.id}&slice=1-4`);
  await expect(rowsOf(page, 'session.status_idle').first()).toBeVisible({ timeout: 20_000 });
  const to = page.getByLabel('Slice to');
  await expect(to).toHaveValue('4');
  await to.click();
  await to.press('End');
  await to.press('Backspace');
  await expect(to).toHaveValue('');
  await to.pressSequentially('5');
  await expect(to).toHaveValue('5');
  await expect(page.getByTestId('slice-raw')).toHaveAttribute('aria-label', 'Raw events 1 to 5');
  await expect.poll(() => new URL(page.url()).searchParams.get('slice')).toBe('1-5');
});
