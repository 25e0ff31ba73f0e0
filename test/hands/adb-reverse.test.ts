/**
 * adb reverse forwarding: the test device's `reverse:` services (test/fixtures/adb-reverse.ts)
 * with the REAL adb CLI and server, and the adb hand's ports to this machine's loopback
 * (main/hands/adb/reverse.ts). A private adb server (test/helpers/adb-private.ts): a wrong
 * forward kills a real server, which must not take other files' devices with it.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adbHandKind, type AdbShell } from '../../main/hands/adb';
import { startPrivateAdb, type PrivateAdb, type PrivateDevice } from '../helpers/adb-private';

let adb: PrivateAdb;
let dev: PrivateDevice;
let oldWifi: PrivateDevice;
let absent: PrivateDevice;
const servers: http.Server[] = [];

/** A loopback HTTP server that answers `NAME PATH BYTES-RECEIVED` then `extra` bytes of 'x'. */
async function named(name: string, extra = 0): Promise<number> {
  const s = http.createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => res.end(`${name} ${req.url} ${n}\n${'x'.repeat(extra)}`));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

async function sh(s: AdbShell, command: string): Promise<{ code: number | null; out: string; err: string }> {
  let out = '';
  let err = '';
  const r = await s.exec(command, { onOutput: (c, st) => (st === 'stdout' ? (out += c) : (err += c)) });
  return { code: r.exitCode, out, err };
}

const connect = (d: PrivateDevice) => adbHandKind.connect({ type: 'adb', serial: d.serial, adb_port: adb.port, working_dir: d.workDir }, { label: 'adb-reverse' }) as Promise<AdbShell>;

beforeAll(async () => {
  adb = await startPrivateAdb(15071);
  dev = await adb.device(6571);
  oldWifi = await adb.device(6572, ['--reverse', 'old-wifi']);
  absent = await adb.device(6573, ['--reverse', 'absent']);
}, 120_000);
afterAll(async () => {
  for (const s of servers) s.close();
  await adb?.close();
});

describe('the test device\'s reverse services, through the real adb CLI and server', () => {
  it('forwards, lists, carries bytes both ways (3 MB up, 3 MB down) and removes, as adbd does', async () => {
    const port = await named('A', 3_000_000);
    const made = await adb.cli(['-s', dev.serial, 'reverse', 'tcp:0', `tcp:${port}`]);
    expect(made.code, made.stderr).toBe(0);
    const devPort = Number(made.stdout.trim());
    expect(devPort).toBeGreaterThan(0);
    // Bound again under its own name: the server keeps a record of forwards by the device address
    // as written (`tcp:0` here), and would kill itself at a connection to a forward it has no record of.
    expect((await adb.cli(['-s', dev.serial, 'reverse', `tcp:${devPort}`, `tcp:${port}`])).code).toBe(0);
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout).toContain(`tcp:${devPort} tcp:${port}`);
    const shell = await adb.cli(['-s', dev.serial, 'shell', `head -c 3000000 /dev/zero | curl -s --data-binary @- http://127.0.0.1:${devPort}/up | head -c 20; echo; curl -s http://127.0.0.1:${devPort}/down | wc -c`]);
    expect(shell.stdout).toBe(`A /up 3000000\n${'x'.repeat(6)}\n${'A /down 0\n'.length + 3_000_000}\n`);
    const noRebind = await adb.cli(['-s', dev.serial, 'reverse', '--no-rebind', `tcp:${devPort}`, 'tcp:1']);
    expect(noRebind.code).not.toBe(0);
    expect(noRebind.stderr).toContain('cannot rebind existing socket');
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--remove', `tcp:${devPort}`])).code).toBe(0);
    const again = await adb.cli(['-s', dev.serial, 'reverse', '--remove', `tcp:${devPort}`]);
    expect(again.stderr).toContain(`listener 'tcp:${devPort}' not found`);
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout.trim()).toBe('');
    // The device port is closed now.
    expect((await adb.cli(['-s', dev.serial, 'shell', `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${devPort}/; echo " $?"`])).stdout).toBe('000 7\n');
    expect(adb.alive()).toBe(true);
  }, 60_000);

  it('an old device over Wi-Fi answers FAIL "more than one device/emulator"', async () => {
    const r = await adb.cli(['-s', oldWifi.serial, 'reverse', 'tcp:0', 'tcp:1']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('more than one device/emulator');
  });
});

describe('the adb hand: the host\'s loopback ports on the device', () => {
  it('reaches two ports at once (git and egress proxies), each through its own device port, and removes them at close', async () => {
    const a = await named('A');
    const b = await named('B');
    const shell = await connect(dev);
    const [ra, rb] = await Promise.all([shell.reachHost(a), shell.reachHost(b)]);
    expect(ra!.host).toBe('127.0.0.1');
    expect(ra!.port).not.toBe(rb!.port);
    // The same port again is the same forward.
    expect(await shell.reachHost(a)).toEqual(ra);
    // Both answer, the first made too (the server keeps a record of each forward by its device
    // port; a connection it has no record of would have killed it).
    const got = await sh(shell, `curl -s http://127.0.0.1:${ra!.port}/one; curl -s http://127.0.0.1:${rb!.port}/two`);
    expect(got.out).toBe('A /one 0\nB /two 0\n');
    expect(adb.alive()).toBe(true);
    expect(shell.facts).toEqual({ reverse_forwarding: { ok: true, forwards: 2 } });
    const list = (await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout;
    expect(list).toContain(`tcp:${ra!.port} tcp:${a}`);
    expect(list).toContain(`tcp:${rb!.port} tcp:${b}`);
    await shell.close();
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout.trim()).toBe('');
    expect(adb.alive()).toBe(true);
  }, 60_000);

  it('a device port that is taken (an app listens, another program forwards it) is passed over, and the other forward is left as it was', async () => {
    const { AdbReverseForwards } = await import('../../main/hands/adb/reverse');
    const app = net.createServer();
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const appPort = (app.address() as AddressInfo).port;
    const theirs = await named('theirs');
    const theirPort = appPort === 29_999 ? 29_998 : 29_999;
    expect((await adb.cli(['-s', dev.serial, 'reverse', `tcp:${theirPort}`, `tcp:${theirs}`])).code).toBe(0);
    const ours = await named('ours');
    const shell = await connect(dev);
    const tried: number[] = [];
    const picks = [appPort, theirPort];
    const fwd = new AdbReverseForwards(shell.adb, shell.addr, dev.serial, () => {
      const p = picks.shift() ?? 30_000 + Math.floor(Math.random() * 1000);
      tried.push(p);
      return p;
    });
    const got = await fwd.reach(ours);
    expect(tried.slice(0, 2)).toEqual([appPort, theirPort]);
    expect(got.port).toBe(tried.at(-1));
    const both = await sh(shell, `curl -s http://127.0.0.1:${got.port}/a; curl -s http://127.0.0.1:${theirPort}/b`);
    expect(both.out).toBe('ours /a 0\ntheirs /b 0\n');
    await fwd.removeAll();
    const list = (await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout;
    expect(list.trim()).toBe(`(reverse) tcp:${theirPort} tcp:${theirs}`);
    expect(adb.alive()).toBe(true);
    await adb.cli(['-s', dev.serial, 'reverse', '--remove', `tcp:${theirPort}`]);
    await shell.close();
    app.close();
  }, 60_000);

  it('a device without reverse forwarding: a clear reason, and the hand still works', async () => {
    const port = await named('C');
    for (const [d, said] of [
      [oldWifi, /cannot do adb reverse forwarding over Wi-Fi \(adbd of Android 8 and older\)/],
      [absent, new RegExp(`device ${absent.serial.replace(/\./g, '\\.')} refused adb reverse forwarding: it has no reverse service`)],
    ] as const) {
      const shell = await connect(d);
      await expect(shell.reachHost(port)).rejects.toThrow(said);
      expect(shell.facts).toMatchObject({ reverse_forwarding: { ok: false, error: expect.stringMatching(said) } });
      expect(await sh(shell, 'echo still here')).toMatchObject({ code: 0, out: 'still here\n' });
      await shell.close();
    }
    expect(adb.alive()).toBe(true);
  }, 60_000);

  it('an adb server on another machine: refused, since its forwards would lead to that machine', async () => {
    const { AdbReverseForwards } = await import('../../main/hands/adb/reverse');
    const shell = await connect(dev);
    const far = new AdbReverseForwards(shell.adb, { host: '192.0.2.7', port: 5037 }, dev.serial);
    await expect(far.reach(1234)).rejects.toThrow(/adb server at 192\.0\.2\.7:5037 runs on another machine/);
    await shell.close();
  });
});
