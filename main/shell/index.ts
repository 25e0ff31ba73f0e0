import path from 'node:path';
import { app, BrowserWindow, dialog, protocol, session, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { createHost, type Host } from '../host';
import { createLogger, levelFromEnv } from '../logging/logger';
import { APP_SCHEME, appLocation, appUrl, isAppUrl, serveBundle } from './app-url';
import { dataDirFlag } from './args';
import { registerIpc } from './ipc';
import { safeStorageKeyWrapper } from './vault-key';

/**
 * The desktop app's main process: one window onto the host. Everything of substance is in the
 * host (plain Node); this file only starts Electron, locks it down and wires IPC.
 */

// userData is where Chromium keeps its profile and, by default, where our data lives. Name it
// like the headless server's default (main/data-dir.ts) so both find the same folder.
app.setName('Corral');
app.setPath('userData', path.join(app.getPath('appData'), 'Corral'));

// Every renderer sandboxed, whatever a window's options say.
app.enableSandbox();
// The built page is served under corral://app/ (main/shell/app-url.ts), not from file://.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } }]);

const here = import.meta.dirname; // out/main
const location = appLocation(path.join(here, '../renderer'), app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL);
const preload = path.join(here, '../preload/index.cjs');

let host: Host | undefined;
let win: BrowserWindow | undefined;
let unregisterIpc: (() => void) | undefined;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!win || win.isDestroyed()) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('web-contents-created', (_event, contents) => lockDown(contents));
  app
    .whenReady()
    .then(start)
    .catch((err: unknown) => fail(err));
}

function start(): void {
  const dataDir = path.resolve(dataDirFlag(process.argv) ?? (process.env.CORRAL_DATA || app.getPath('userData')));
  // The app logs to DATA/logs/corral.log only (synchronous writes: no worker threads in Electron).
  const logger = createLogger({ dataDir, level: levelFromEnv(process.env.CORRAL_LOG_LEVEL) });
  try {
    host = createHost({
      dataDir,
      nativeBinding: process.env.CORRAL_SQLITE_BINDING || undefined,
      brains: true,
      what: 'the Corral desktop app',
      logger,
      vault: { keyWrapper: safeStorageKeyWrapper() },
    });
  } catch (err) {
    fail(err, `Could not open the data folder ${dataDir}.`);
    return;
  }
  host.vault.ready.catch((err: unknown) => fail(err, `Could not open the vault in ${dataDir}.`));
  console.log(`corral: data in ${dataDir}`);

  // The page needs no permission (camera, notifications, USB/HID/serial devices, …): refuse them all.
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  session.defaultSession.setDevicePermissionHandler(() => false);
  const bundle = location.kind === 'bundle' ? location : undefined;
  if (bundle) protocol.handle(APP_SCHEME, (request) => serveBundle(bundle, request));

  unregisterIpc = registerIpc(host, isOurPage);
  createWindow();

  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
}

function createWindow(): void {
  win = new BrowserWindow({
    width: 1280,
    height: 820,
    show: false,
    title: 'Corral',
    backgroundColor: '#15171c',
    webPreferences: {
      // Reviewed: the preload exposes one object of named methods through contextBridge, nothing
      // of Node or Electron (preload/index.ts).
      preload, // eng-disable PRELOAD_JS_CHECK
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      // Middle-click opens links in new windows, past will-navigate.
      disableBlinkFeatures: 'Auxclick',
    },
  });
  win.once('ready-to-show', () => win?.show());
  void win.loadURL(appUrl(location));
}

/** Only our own page, in the main frame of our window, may use the API. */
function isOurPage(event: IpcMainEvent | IpcMainInvokeEvent): boolean {
  if (!win || win.isDestroyed() || event.sender !== win.webContents) return false;
  const frame = event.senderFrame;
  const main = win.webContents.mainFrame;
  if (!frame || frame.parent !== null) return false;
  if (frame !== main && (frame.processId !== main.processId || frame.routingId !== main.routingId)) return false;
  return isAppUrl(location, frame.url);
}

/** Every webContents: no new windows, no navigation away from the app, no <webview>. */
function lockDown(contents: WebContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const guard = (event: { url: string; preventDefault(): void }) => {
    if (!isAppUrl(location, event.url)) {
      event.preventDefault();
      console.warn(`corral: blocked navigation to ${event.url}`);
    }
  };
  contents.on('will-navigate', guard);
  contents.on('will-frame-navigate', guard);
  contents.on('will-redirect', guard);
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

function fail(err: unknown, what = 'Corral could not start.'): void {
  console.error('corral:', err);
  const detail = err instanceof Error ? err.message : String(err);
  dialog.showErrorBox('Corral', `${what}\n\n${detail}`);
  app.exit(1);
}

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('will-quit', () => {
  unregisterIpc?.();
  unregisterIpc = undefined;
  void host?.close();
  host = undefined;
});
