/** An `adb` environment's config (see the `adb` entry of main/api/schemas/environments.ts). */
export interface AdbConfig {
  type?: 'adb';
  /** The device's serial as the adb server lists it (`adb devices`), e.g. `emulator-5554` or `192.168.1.20:5555`. */
  serial: string;
  /** Where the adb server listens; default 127.0.0.1. */
  adb_host?: string;
  /** The adb server's port; default ANDROID_ADB_SERVER_PORT, else 5037. */
  adb_port?: number;
  /** The hand's work folder on the device; default /data/local/tmp/corral. */
  working_dir?: string;
}

/** Writable by the shell user on every Android device, and kept across reboots. */
export const DEFAULT_WORK_DIR = '/data/local/tmp/corral';

export interface ServerAddress {
  host: string;
  port: number;
}

/** The adb server a config points at: its own adb_host/adb_port, else ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037. */
export function serverAddress(config: AdbConfig, env: NodeJS.ProcessEnv = process.env): ServerAddress {
  const fromEnv = Number(env.ANDROID_ADB_SERVER_PORT);
  const port = config.adb_port ?? (Number.isInteger(fromEnv) && fromEnv > 0 && fromEnv < 65536 ? fromEnv : 5037);
  return { host: config.adb_host ?? '127.0.0.1', port };
}

export const formatAddress = (a: ServerAddress) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
