import { errorOutcome } from '../tools/input';
import type { KindTool, RemoteShell } from '../remote/types';
import type { ToolOutcome } from '../types';
import { pngSize } from './png';
import { AdbShell } from './shell';

const SCREENSHOT_TIMEOUT_MS = 30_000;

/** `screenshot`: the device's screen as a PNG image for the model (`screencap -p`). */
export const screenshotTool: KindTool = {
  definition: {
    name: 'screenshot',
    description:
      "Takes a screenshot of the Android device's screen (`screencap -p`) and returns it as a PNG image, with its size in pixels. Use it to see what the device shows, e.g. after starting an app or sending input with `input tap X Y` through bash. Takes no input.",
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
  },
  async run(shell: RemoteShell, _input: Record<string, unknown>, opts: { signal?: AbortSignal }): Promise<ToolOutcome> {
    const device = shell instanceof AdbShell ? shell.name : 'the device';
    if (shell.lostReason) return errorOutcome(`The device is gone: ${shell.lostReason}.`, { lost: shell.lostReason });
    const ctrl = new AbortController();
    let why: 'interrupted' | 'timed out' | undefined;
    const onAbort = () => ((why ??= 'interrupted'), ctrl.abort());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const timer = setTimeout(() => ((why ??= 'timed out'), ctrl.abort()), SCREENSHOT_TIMEOUT_MS);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const started = Date.now();
    try {
      const res = await shell.exec('screencap -p', { signal: ctrl.signal, onOutput: (c, s) => (s === 'stdout' ? out : err).push(c) });
      if (res.lost) return errorOutcome(`The device is gone: ${res.lost}.`, { lost: res.lost });
      if (why) return errorOutcome(`screencap ${why} after ${Date.now() - started} ms.`);
      const png = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (res.exitCode !== 0) return errorOutcome(`screencap failed on ${device} (exit code ${res.exitCode ?? 'none'})${stderr ? `: ${stderr}` : ''}.`);
      const size = pngSize(png);
      if (!size) return errorOutcome(`screencap on ${device} did not produce a PNG (${png.length} bytes${stderr ? `; it said: ${stderr}` : ''}).`);
      return {
        content: `Screenshot of ${device} (${size.width}×${size.height} PNG)`,
        isError: false,
        images: [{ media_type: 'image/png', data: png.toString('base64') }],
        details: { width: size.width, height: size.height, bytes: png.length, duration_ms: Date.now() - started },
      };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  },
};
