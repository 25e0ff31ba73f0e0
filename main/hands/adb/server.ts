import { AdbServerClient } from '@yume-chan/adb';
import { AdbServerNodeTcpConnector } from '@yume-chan/adb-server-node-tcp';
import { formatAddress, type ServerAddress } from './config';

export type AdbDevice = AdbServerClient.Device;
export const ALL_STATES: readonly AdbServerClient.ConnectionState[] = ['device', 'offline', 'unauthorized'];

/** How long one request to the adb server may take before it counts as not answering. */
export const SERVER_TIMEOUT_MS = 10_000;

export function createServerClient(addr: ServerAddress): AdbServerClient {
  return new AdbServerClient(new AdbServerNodeTcpConnector({ host: addr.host, port: addr.port }));
}

/** Rejects with `message` after `ms` (or when `signal` aborts); never leaves `p` unhandled. */
export function withTimeout<T>(p: Promise<T>, ms: number, message: string, signal?: AbortSignal): Promise<T> {
  p.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    const onAbort = () => reject(new Error('aborted'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

/** Says in words why the adb server could not be reached. */
export function serverError(addr: ServerAddress, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = formatAddress(addr);
  if (code === 'ECONNREFUSED') return new Error(`no adb server answers at ${where} (start one with \`adb start-server\`, or set adb_host/adb_port or ANDROID_ADB_SERVER_PORT)`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new Error(`the adb server host ${addr.host} cannot be resolved`);
  const msg = err instanceof Error ? err.message : String(err);
  return new Error(`the adb server at ${where} failed: ${msg}`);
}

/** Every device the server knows, whatever its state. */
export async function listDevices(client: AdbServerClient, addr: ServerAddress, signal?: AbortSignal): Promise<AdbDevice[]> {
  try {
    return await withTimeout(client.getDevices(ALL_STATES), SERVER_TIMEOUT_MS, `the adb server at ${formatAddress(addr)} did not answer within ${SERVER_TIMEOUT_MS / 1000} s`, signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw serverError(addr, err);
  }
}

const listed = (devices: readonly AdbDevice[]) =>
  devices.length === 0 ? 'it lists no devices' : `it lists ${devices.map((d) => `${d.serial} (${d.state})`).join(', ')}`;

/** The device with `serial`, online; a clear error when it is missing, offline or unauthorized. */
export function pickDevice(devices: readonly AdbDevice[], serial: string, addr: ServerAddress): AdbDevice {
  const dev = devices.find((d) => d.serial === serial);
  const where = `the adb server at ${formatAddress(addr)}`;
  if (!dev) return fail(`no device with serial '${serial}' on ${where}; ${listed(devices)}`);
  if (dev.state === 'offline') return fail(`device ${serial} is offline on ${where} (a network device that went away stays offline: reconnect it with \`adb disconnect ${serial}\` then \`adb connect ${serial}\`)`);
  if (dev.state === 'unauthorized') return fail(`device ${serial} is unauthorized: accept the "Allow USB debugging" prompt on the device`);
  return dev;
}

function fail(message: string): never {
  throw new Error(message);
}
