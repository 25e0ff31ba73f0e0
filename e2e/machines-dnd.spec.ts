import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { fingerprintOf } from '../main/hands/ssh/known-hosts';
import { sshEnv, sshTurn } from './hands-backend';
import { client, freshLink, newSession, rowsOf } from './helpers';

/**
 * Machines by drag and drop (issue #12) in the browser, against `serve` and the real sshd test
 * host: a bad file refused; a private key and an ssh config dropped (synthesised drop events),
 * the missing user typed, a changed host key refused with both fingerprints, the new one accepted,
 * the machine dropped onto a session and a command run there; a move refused while the hand is
 * busy, then the hand dragged to another idle session, both timelines recording it. The key's
 * text never comes back to the page.
 */
test.setTimeout(120_000);

const screens = path.resolve(import.meta.dirname, '..', 'test-results', 'screens');

/** Drops files on the window as the OS would (a DataTransfer holding Files). */
async function dropFiles(page: Page, files: { name: string; text: string }[]) {
  await page.evaluate((list) => {
    // The page's DOM (this spec is compiled without the DOM library).
    const g = globalThis as unknown as Record<string, any>;
    const dt = new g.DataTransfer();
    for (const f of list) dt.items.add(new g.File([f.text], f.name, { type: 'application/octet-stream' }));
    g.dispatchEvent(new g.DragEvent('dragenter', { dataTransfer: dt, bubbles: true }));
    g.dispatchEvent(new g.DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}

const eventsOf = async (id: string) => (await client.beta.sessions.events.list(id, { limit: 1000 })).data;
const toolResults = async (id: string) => (await eventsOf(id)).filter((e) => e.type === 'agent.tool_result');

async function idle(id: string) {
  await expect.poll(async () => (await client.beta.sessions.retrieve(id)).status, { timeout: 30_000 }).toBe('idle');
}

test('attach an SSH host by dropping a key and a config, use it from a session, hand it over', async ({ page }) => {
  const release = await sshTurn();
  try {
    const ssh = sshEnv();
    const keyText = fs.readFileSync(ssh.CORRAL_TEST_SSH_KEY!, 'utf8');
    const keyLine = keyText.trim().split('\n').at(-2)!;
    const pub = fs.readFileSync(ssh.CORRAL_TEST_SSH_HOST_PUBKEY!, 'utf8').split(' ');
    const hostFp = fingerprintOf(Buffer.from(pub[1]!, 'base64'));
    const received: string[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8'))));

    const a = await newSession('dnd giver');
    const b = await newSession('dnd taker');
    await idle(a.id);
    await idle(b.id);
    await page.goto(await freshLink());
    await page.getByRole('tab', { name: 'Hands' }).click();
    const notice = page.getByTestId('hands-notice');

    // A bad file: a clear message, nothing stored.
    await dropFiles(page, [{ name: 'notes.txt', text: 'just some notes\n' }]);
    await expect(notice).toHaveText(/notes\.txt is not an ssh config \(no Host lines\)/);
    expect((await client.beta.vaults.list()).data).toHaveLength(0);

    // The key and a config without a User: the form asks only for the user.
    await dropFiles(page, [
      { name: 'id_ed25519', text: keyText },
      { name: 'config', text: `Host loop\n  HostName ${ssh.CORRAL_TEST_SSH_HOST}\n  Port ${ssh.CORRAL_TEST_SSH_PORT}\n` },
    ]);
    const form = page.getByLabel('Attach an SSH host');
    await expect(form.getByLabel('Host', { exact: true })).toHaveValue(ssh.CORRAL_TEST_SSH_HOST!);
    await expect(form.getByLabel('Port')).toHaveValue(ssh.CORRAL_TEST_SSH_PORT!);
    await expect(form).toContainText('Key: id_ed25519 (ssh-ed25519 SHA256:');
    await form.getByLabel('User').fill(ssh.CORRAL_TEST_SSH_USER!);
    await page.screenshot({ path: path.join(screens, 'hands-attach-form.png') });

    // A changed host key: refused, both fingerprints shown, nothing attached.
    const trustStore = path.join(process.env.E2E_DATA!, 'ssh', 'known_hosts');
    const bogus = 'AAAAC3NzaC1lZDI1NTE5AAAAIHsAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const oldFp = fingerprintOf(Buffer.from(bogus, 'base64'));
    fs.mkdirSync(path.dirname(trustStore), { recursive: true });
    fs.writeFileSync(trustStore, `[${ssh.CORRAL_TEST_SSH_HOST}]:${ssh.CORRAL_TEST_SSH_PORT} ssh-ed25519 ${bogus}\n`);
    await form.getByRole('button', { name: 'Test connection' }).click();
    const hostKey = page.getByTestId('host-key');
    await expect(hostKey).toHaveAttribute('data-status', 'changed');
    await expect(hostKey).toContainText(oldFp);
    await expect(hostKey).toContainText(hostFp);
    await expect(form.getByRole('button', { name: 'Attach' })).toBeDisabled();
    fs.rmSync(trustStore);

    // Test again: a new key, shown for the user to accept; then attach.
    await form.getByRole('button', { name: 'Test connection' }).click();
    await expect(hostKey).toHaveAttribute('data-status', 'new');
    await expect(page.getByTestId('fingerprint')).toHaveText(hostFp);
    await form.getByRole('button', { name: 'Accept this fingerprint' }).click();
    await expect(hostKey).toHaveAttribute('data-status', 'known');
    expect(fs.readFileSync(trustStore, 'utf8')).toContain(pub[1]!);
    await form.getByRole('button', { name: 'Attach' }).click();
    const machine = page.getByTestId('machine-loop');
    const grip = machine.locator('strong'); // the name: the row also holds the menu
    await expect(machine).toBeVisible();

    // Drop the machine onto the giver; a second drop is refused and changes nothing.
    const targetA = page.getByTestId(`target-${a.id}`);
    const targetB = page.getByTestId(`target-${b.id}`);
    await grip.dragTo(targetA.locator('.session-title'));
    const chipA = page.getByTestId(`hand-${a.id}-loop`);
    await expect(chipA).toBeVisible();
    await grip.dragTo(targetA.locator('.session-title'));
    await expect(notice).toHaveText(/the session already has a hand named 'loop'/);
    await expect(targetA.locator('.hand-chip')).toHaveCount(2);

    // A command there from the session.
    await client.beta.sessions.events.send(a.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'run whoami on hand loop' }] }] });
    await expect.poll(async () => JSON.stringify((await toolResults(a.id)).at(-1) ?? null), { timeout: 30_000 }).toContain(ssh.CORRAL_TEST_SSH_USER);
    await idle(a.id);

    // Busy in a call: the move is refused with a message, and both sessions keep their hands.
    await client.beta.sessions.events.send(a.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'run sleep on hand loop' }] }] });
    await expect.poll(async () => (await eventsOf(a.id)).filter((e) => e.type === 'agent.tool_use').length, { timeout: 30_000 }).toBe(2);
    await chipA.locator('.hand-name').dragTo(targetB.locator('.session-title'));
    await expect(notice).toHaveText(/hand 'loop' is busy running a tool call/);
    await expect(targetB.locator('.hand-chip')).toHaveCount(1);
    await expect(chipA).toBeVisible();
    await expect.poll(async () => JSON.stringify((await toolResults(a.id)).at(-1) ?? null), { timeout: 30_000 }).toContain('slept');
    await idle(a.id);

    // Idle: dragged to the taker; both timelines record the hand-over.
    await chipA.locator('.hand-name').dragTo(targetB.locator('.session-title'));
    await expect(page.getByTestId(`hand-${b.id}-loop`)).toBeVisible();
    await expect(chipA).toHaveCount(0);
    await page.screenshot({ path: path.join(screens, 'hands-panel.png') });
    await page.goto(`${await freshLink()}&session=${a.id}`);
    await expect(rowsOf(page, 'hand.handed_over')).toHaveCount(1);
    await page.goto(`${await freshLink()}&session=${b.id}`);
    await expect(rowsOf(page, 'hand.received')).toHaveCount(1);

    // The key's text came back in no frame, and is nowhere on the page.
    expect(received.join('\n')).not.toContain(keyLine);
    expect(await page.content()).not.toContain(keyLine);
  } finally {
    release();
  }
});

test('discovery offers the container engine and the adb device; the menu gives them to a session, which then holds three machines', async ({ page }) => {
  const docker = sshEnv('docker');
  const release = await sshTurn('adb'); // adb-*.test.ts kill devices and the adb server
  try {
    const adb = sshEnv('adb');
    const taker = (await client.beta.sessions.list()).data.find((s) => s.title === 'dnd taker')!;
    await page.goto(await freshLink());
    await page.getByRole('tab', { name: 'Hands' }).click();
    await page.getByRole('button', { name: 'Look', exact: true }).click();
    const found = page.getByRole('region', { name: 'Found on this machine' });
    await found.getByRole('button', { name: `Attach ${docker.CORRAL_TEST_DOCKER_IMAGE}` }).click();
    const box = page.getByTestId('machine-busybox');
    await expect(box).toBeVisible();
    await found.getByRole('button', { name: `Attach ${adb.CORRAL_TEST_ADB_SERIAL}` }).click();
    // Named after the device's model, as the adb server lists it (the test device's: test/fixtures/adb-transport.ts).
    const phone = page.getByTestId('machine-CorralTest');
    await expect(phone).toContainText(adb.CORRAL_TEST_ADB_SERIAL!);
    await expect(phone).toBeVisible();

    // The keyboard's way: the "Give to session…" menu (other specs' machines may be listed too).
    for (const row of [box, phone]) {
      await row.getByRole('combobox').selectOption(taker.id);
      await row.getByRole('button', { name: 'Give' }).click();
      await expect(page.getByTestId('hands-notice')).toHaveText(/^Gave '/);
    }
    const chips = page.getByTestId(`target-${taker.id}`).locator('.hand-chip');
    await expect(chips).toHaveCount(4);
    expect((await chips.locator('.kind').allInnerTexts()).map((k) => k.toLowerCase()).sort()).toEqual(['adb', 'docker', 'local', 'ssh']);
    for (const row of [box, phone, page.getByTestId('machine-loop')]) await expect(row.locator('.state')).toHaveText(/^held by \d+ sessions?$/);
    await page.screenshot({ path: path.join(screens, 'hands-three-machines.png') });
    await page.goto(`${await freshLink()}&session=${taker.id}`);
    await expect(rowsOf(page, 'hand.attached')).toHaveCount(2);
    await page.screenshot({ path: path.join(screens, 'session-three-machines.png') });
  } finally {
    release();
  }
});
