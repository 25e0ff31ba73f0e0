/**
 * The `adb` hand kind: an Android device, reached through an adb server (the one on this
 * machine by default). Commands run with shell protocol v2 (stdout and stderr apart, exit
 * codes), files move with the sync service, and the device's transport is watched, so a device
 * that is unplugged or goes offline makes the hand lost within a couple of seconds.
 *
 *   const shell = await adbHandKind.connect({ serial: 'emulator-5554' }, { label: 'bench' });
 *   const { exitCode } = await shell.exec('echo hi', { onOutput: (c) => process.stdout.write(c) });
 *   await shell.close();
 */
import { AdbFeature } from '@yume-chan/adb';
import { shq } from '../remote/shell-hand';
import type { RemoteHandKind } from '../remote/types';
import { DEFAULT_WORK_DIR, formatAddress, serverAddress, type AdbConfig } from './config';
import { screenshotTool } from './screenshot';
import { createServerClient, listDevices, pickDevice, SERVER_TIMEOUT_MS, withTimeout } from './server';
import { AdbShell } from './shell';

export type { AdbConfig } from './config';
export { AdbShell } from './shell';
export { screenshotTool } from './screenshot';
export { pngSize } from './png';

/** Models seen at connect, by server and serial, so that describe() can name the device. */
const models = new Map<string, string>();
const modelKey = (config: AdbConfig) => `${formatAddress(serverAddress(config))}/${config.serial}`;

export const adbHandKind: RemoteHandKind<AdbConfig> = {
  kind: 'adb',

  async connect(config, ctx) {
    const addr = serverAddress(config);
    const workDir = config.working_dir ?? DEFAULT_WORK_DIR;
    const client = createServerClient(addr);
    const devices = await listDevices(client, addr, ctx.signal);
    const device = pickDevice(devices, config.serial, addr);
    const claiming = client.createAdb({ transportId: device.transportId });
    const adb = await withTimeout(claiming, SERVER_TIMEOUT_MS, `device ${config.serial} did not answer within ${SERVER_TIMEOUT_MS / 1000} s`, ctx.signal).catch((err: unknown) => {
      // Given up on (timeout or abort): if it still comes, let it go.
      claiming.then((late) => late.close(), () => {}).catch(() => {});
      throw err;
    });
    if (!adb.canUseFeature(AdbFeature.ShellV2)) {
      await Promise.resolve(adb.close()).catch(() => {});
      throw new Error(`device ${config.serial} does not support shell protocol v2 (it needs Android 7 or newer); its features: ${adb.deviceFeatures.join(', ') || 'none'}`);
    }
    const shell = new AdbShell(client, adb, device, addr, workDir);
    shell.startWatching();
    try {
      ctx.signal?.throwIfAborted();
      const err: Buffer[] = [];
      const res = await shell.exec(`mkdir -p ${shq(workDir)} && test -w ${shq(workDir)}`, { signal: ctx.signal, onOutput: (c, s) => s === 'stderr' && err.push(c) });
      if (res.lost) throw new Error(`device ${config.serial} went away while connecting: ${res.lost}`);
      ctx.signal?.throwIfAborted();
      if (res.exitCode !== 0) {
        const said = Buffer.concat(err).toString('utf8').trim();
        throw new Error(`cannot use ${workDir} as the work folder on device ${config.serial}${said ? `: ${said}` : ' (it cannot be created, or is not writable)'}`);
      }
    } catch (e) {
      await shell.close();
      throw e;
    }
    if (shell.model) models.set(modelKey(config), shell.model);
    return shell;
  },

  defaultWorkDir: () => DEFAULT_WORK_DIR,

  describe(config) {
    const model = models.get(modelKey(config));
    return `adb ${config.serial}${model ? ` (${model})` : ''}`;
  },

  extraTools: [screenshotTool],
};
