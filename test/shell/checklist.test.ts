/**
 * Electron's security checklist (https://www.electronjs.org/docs/latest/tutorial/security), the
 * items that live in code, checked without Electron: the desktop shell (main/shell/index.ts and
 * ipc.ts) is loaded against a recording stand-in for the `electron` module, which keeps every
 * option, handler and listener the shell gives it; the test then looks at them and calls them
 * as Electron would. What only a running Electron could show is listed in the README.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { APP_CSP, appLocation, serveBundle } from '../../main/shell/app-url';
import { ipcChannel } from '../../main/api/ui/methods';
import { tmpDir } from '../helpers/tmp';

const rec = vi.hoisted(() => {
  type Fn = (...args: any[]) => any;
  class Emitter {
    readonly listeners = new Map<string, Fn[]>();
    on(name: string, fn: Fn) {
      this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
      return this;
    }
    once(name: string, fn: Fn) {
      return this.on(name, fn);
    }
    off(name: string, fn: Fn) {
      this.listeners.set(name, (this.listeners.get(name) ?? []).filter((f) => f !== fn));
      return this;
    }
    emit(name: string, ...args: unknown[]) {
      return (this.listeners.get(name) ?? []).map((f) => f(...args));
    }
  }
  let nextId = 1;
  class FakeWebContents extends Emitter {
    readonly id = nextId++;
    windowOpenHandler: Fn | undefined;
    readonly mainFrame = { parent: null as unknown, url: '', processId: 7, routingId: this.id };
    sent: unknown[] = [];
    setWindowOpenHandler(fn: Fn) {
      this.windowOpenHandler = fn;
    }
    isDestroyed() {
      return false;
    }
    send(...args: unknown[]) {
      this.sent.push(args);
    }
  }
  const app = Object.assign(new Emitter(), {
    isPackaged: false,
    sandboxEnabled: false,
    setName: vi.fn(),
    setPath: vi.fn(),
    getPath: vi.fn((name: string) => `/nonexistent/${name}`),
    requestSingleInstanceLock: vi.fn(() => true),
    enableSandbox: vi.fn(() => void (app.sandboxEnabled = true)),
    whenReady: vi.fn(() => Promise.resolve()),
    quit: vi.fn(),
    exit: vi.fn(),
  });
  const windows: FakeWindow[] = [];
  class FakeWindow extends Emitter {
    readonly webContents = new FakeWebContents();
    loadedUrl: string | undefined;
    constructor(readonly options: Record<string, any>) {
      super();
      windows.push(this);
      // As Electron does, every new webContents is announced to the app.
      app.emit('web-contents-created', {}, this.webContents);
    }
    static getAllWindows() {
      return windows;
    }
    loadURL(url: string) {
      this.loadedUrl = url;
      return Promise.resolve();
    }
    isDestroyed() {
      return false;
    }
    isMinimized() {
      return false;
    }
    show() {}
    focus() {}
    restore() {}
  }
  const ipcHandlers = new Map<string, Fn>();
  const ipcListeners = new Map<string, Fn>();
  const session = {
    defaultSession: {
      permissionRequestHandler: undefined as Fn | undefined,
      permissionCheckHandler: undefined as Fn | undefined,
      devicePermissionHandler: undefined as Fn | undefined,
      setPermissionRequestHandler(fn: Fn) {
        this.permissionRequestHandler = fn;
      },
      setPermissionCheckHandler(fn: Fn) {
        this.permissionCheckHandler = fn;
      },
      setDevicePermissionHandler(fn: Fn) {
        this.devicePermissionHandler = fn;
      },
    },
  };
  const protocol = {
    privileged: [] as unknown[],
    handlers: new Map<string, Fn>(),
    registerSchemesAsPrivileged(list: unknown[]) {
      this.privileged.push(...list);
    },
    handle(scheme: string, fn: Fn) {
      this.handlers.set(scheme, fn);
    },
  };
  const electron = {
    app,
    BrowserWindow: FakeWindow,
    dialog: { showErrorBox: vi.fn() },
    session,
    protocol,
    shell: { openExternal: vi.fn() },
    // Linux without a keyring: the vault key stays a 0600 file (main/shell/vault-key.ts).
    safeStorage: { isAsyncEncryptionAvailable: async () => false, getSelectedStorageBackend: () => 'basic_text' },
    ipcMain: {
      handle: (ch: string, fn: Fn) => ipcHandlers.set(ch, fn),
      removeHandler: (ch: string) => ipcHandlers.delete(ch),
      on: (ch: string, fn: Fn) => ipcListeners.set(ch, fn),
      off: (ch: string) => ipcListeners.delete(ch),
    },
  };
  return { electron, app, windows, ipcHandlers, session, protocol, FakeWebContents };
});

vi.mock('electron', () => ({ ...rec.electron, default: rec.electron }));

const root = path.resolve(__dirname, '../..');
const read = (rel: string) => fs.readFileSync(path.join(root, rel), 'utf8');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let win: (typeof rec.windows)[number];

beforeAll(async () => {
  delete process.env.ELECTRON_RENDERER_URL;
  process.env.CORRAL_DATA = tmpDir('corral-shell-data-');
  process.env.CORRAL_WORK_ROOT = tmpDir('corral-shell-work-');
  await import('../../main/shell/index');
  // start() runs once whenReady resolves.
  for (let i = 0; i < 100 && rec.windows.length === 0; i++) await sleep(20);
  expect(rec.electron.dialog.showErrorBox).not.toHaveBeenCalled();
  expect(rec.windows).toHaveLength(1);
  win = rec.windows[0]!;
});

afterAll(async () => {
  rec.app.emit('will-quit');
  await sleep(200);
  delete process.env.CORRAL_DATA;
  delete process.env.CORRAL_WORK_ROOT;
});

describe("Electron's security checklist, as far as it lives in code", () => {
  it('2-4, 6, 8-12: the window has no Node, isolated and sandboxed renderers, web security on, no insecure content, experiments or webviews', () => {
    const wp = win.options.webPreferences;
    expect(wp).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
    });
    expect(wp.nodeIntegrationInWorker).not.toBe(true);
    expect(wp.nodeIntegrationInSubFrames).not.toBe(true);
    expect(wp.enableBlinkFeatures).toBeUndefined();
    expect(wp.disableBlinkFeatures).toContain('Auxclick');
    expect(wp.preload).toMatch(/preload[/\\]index\.cjs$/);
    // And every renderer is sandboxed, whatever its options.
    expect(rec.app.enableSandbox).toHaveBeenCalled();
  });

  it('18: the page is served under a privileged custom scheme, not file://', async () => {
    expect(win.loadedUrl).toBe('corral://app/index.html');
    expect(rec.protocol.privileged).toContainEqual({ scheme: 'corral', privileges: expect.objectContaining({ standard: true, secure: true }) });
    const handler = rec.protocol.handlers.get('corral');
    expect(handler).toBeDefined();
    // The handler the shell registered refuses what is not the bundle.
    for (const url of ['corral://app/../../package.json', 'corral://app/%2e%2e/%2e%2e/package.json', 'corral://elsewhere/index.html']) {
      expect((await handler!(new Request(url))).status, url).toBe(404);
    }
  });

  it('serves the built renderer with its CSP, and nothing outside it (symbolic links included)', async () => {
    const dir = tmpDir('corral-renderer-');
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>x</title>');
    fs.writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
    const outside = tmpDir('corral-outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(outside, path.join(dir, 'assets', 'link'));
    const loc = appLocation(dir, undefined);
    if (loc.kind !== 'bundle') throw new Error('expected a bundle');
    const page = await serveBundle(loc, new Request('corral://app/index.html?session=x'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(APP_CSP);
    const js = await serveBundle(loc, new Request('corral://app/assets/app.js'));
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await serveBundle(loc, new Request('corral://app/assets/link/secret.txt'))).status).toBe(404);
    expect((await serveBundle(loc, new Request('corral://app/assets'))).status).toBe(404);
    expect((await serveBundle(loc, new Request('corral://app/index.html', { method: 'POST', body: 'x' }))).status).toBe(405);
  });

  it('7: a strict CSP in the page, the same as the header', () => {
    const html = read('renderer/index.html');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toBeDefined();
    const directives = new Map(meta!.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(meta).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    // frame-ancestors only works as a header, which has it besides.
    expect(APP_CSP.replace(/; frame-ancestors 'none'$/, '')).toBe(meta);
  });

  it('5 (the part in code): every permission request, check and device request is refused', () => {
    const s = rec.session.defaultSession;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      const callback = vi.fn();
      s.permissionRequestHandler!(win.webContents, permission, callback, {});
      expect(callback).toHaveBeenCalledWith(false);
      expect(s.permissionCheckHandler!(win.webContents, permission, 'corral://app', {})).toBe(false);
    }
    expect(s.devicePermissionHandler!({ deviceType: 'usb' })).toBe(false);
  });

  it('12-15: navigation away, new windows and <webview> are refused; nothing is opened externally', () => {
    const wc = win.webContents;
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect']) {
      const away = { url: 'https://evil.example/', preventDefault: vi.fn() };
      wc.emit(event, away);
      expect(away.preventDefault, event).toHaveBeenCalled();
      for (const url of ['file:///etc/passwd', `file://${root}/renderer/index.html`, 'corral://app/other.html']) {
        const e = { url, preventDefault: vi.fn() };
        wc.emit(event, e);
        expect(e.preventDefault, `${event} ${url}`).toHaveBeenCalled();
      }
      const home = { url: 'corral://app/index.html?session=sesn_1', preventDefault: vi.fn() };
      wc.emit(event, home);
      expect(home.preventDefault, event).not.toHaveBeenCalled();
    }
    expect(wc.windowOpenHandler!({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler!({ url: 'corral://app/index.html' })).toEqual({ action: 'deny' });
    const attach = { preventDefault: vi.fn() };
    wc.emit('will-attach-webview', attach, {}, {});
    expect(attach.preventDefault).toHaveBeenCalled();
    // Any webContents at all gets the same treatment, not only our window's.
    const other = new rec.FakeWebContents();
    rec.app.emit('web-contents-created', {}, other);
    expect(other.windowOpenHandler!({ url: 'https://x.example' })).toEqual({ action: 'deny' });
    expect(rec.electron.shell.openExternal).not.toHaveBeenCalled();
  });

  it('17: IPC answers our own page in our main frame only', async () => {
    const handler = rec.ipcHandlers.get(ipcChannel.call('listSessions'));
    expect(handler).toBeDefined();
    const wc = win.webContents;
    wc.mainFrame.url = 'corral://app/index.html?session=x';
    const ours = { sender: wc, senderFrame: wc.mainFrame };
    expect(await handler!(ours, { limit: 5 })).toMatchObject({ ok: true });
    const refused = { ok: false, error: { kind: 'invalid_input', message: 'IPC sender refused' } };
    const stranger = new rec.FakeWebContents();
    stranger.mainFrame.url = 'corral://app/index.html';
    expect(await handler!({ sender: stranger, senderFrame: stranger.mainFrame }, {})).toEqual(refused);
    expect(await handler!({ sender: wc, senderFrame: { ...wc.mainFrame, parent: wc.mainFrame } }, {})).toEqual(refused);
    expect(await handler!({ sender: wc, senderFrame: { ...wc.mainFrame, routingId: 999 } }, {})).toEqual(refused);
    expect(await handler!({ sender: wc, senderFrame: null }, {})).toEqual(refused);
    wc.mainFrame.url = 'https://evil.example/';
    expect(await handler!(ours, {})).toEqual(refused);
    wc.mainFrame.url = `file://${root}/out/renderer/index.html`;
    expect(await handler!(ours, {})).toEqual(refused);
    // Every channel registered is a named call or stream: there is no generic one.
    for (const ch of rec.ipcHandlers.keys()) expect(ch).toMatch(/^corral:/);
  });

  it('15, 20: no remote module, no openExternal, only named methods for the page', () => {
    const sources = ['main/shell/index.ts', 'main/shell/ipc.ts', 'main/shell/app-url.ts', 'preload/index.ts'].map(read).join('\n');
    expect(sources).not.toMatch(/@electron\/remote|enableRemoteModule|\bremote\s*\./);
    expect(sources).not.toMatch(/openExternal/);
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain('@electron/remote');
    expect(read('preload/index.ts')).toMatch(/contextBridge\.exposeInMainWorld\('corral', api\)/);
  });
});
