import type { CorralApi, LiveTextItem, UiCallOutputs, UiError, UiEvent, UiInput, UiStreamItems } from '../../../main/api/ui/contract';
import { bindApi, type CallFn, type WatchFn } from '../../../main/api/ui/bind';
import type { UiCallName, UiStreamName } from '../../../main/api/ui/methods';
import { ClientError, fromUiError } from './errors';
import type { ConnectionStatus, Transport } from './types';

/**
 * The renderer's API over the headless server's WebSocket (`/ui/ws`, authorised by the cookie
 * `corral serve` set). Calls made while disconnected wait for the socket; streams survive a
 * reconnect (watchEvents resumes after the last seq it delivered, so nothing is lost or doubled;
 * watchLiveText starts again from the next event begun, since live text sent while the line was
 * down is gone: the finished event comes from the log).
 */

/** Close code the server uses for a page that is not authorised. */
export const CLOSE_UNAUTHORISED = 4401;
/** Close code the server uses for a connection from another origin. */
export const CLOSE_REFUSED = 4403;

type ServerMessage =
  | { t: 'result'; id: number; ok: true; value: unknown }
  | { t: 'result'; id: number; ok: false; error: UiError }
  | { t: 'item'; id: number; item: unknown };

interface PendingCall {
  message: { t: 'call'; id: number; method: UiCallName; input: unknown };
  sent: boolean;
  resolve(value: unknown): void;
  reject(err: ClientError): void;
}

interface Watch {
  stream: UiStreamName;
  input: Record<string, unknown>;
  onItem(item: unknown): void;
  onError?: (error: UiError) => void;
  /** Id of the current `watch` message on the current socket. */
  wireId?: number;
  /** Position of the last item delivered, for streams that can resume. */
  last?: number;
  /** Live text: ids of the events whose start this socket delivered (deltas of others are dropped). */
  started?: Set<string>;
}

/** Streams that can resume: where an item sits, and the input that continues after it. */
const resumable: Partial<Record<UiStreamName, { position(item: unknown): number; after(input: Record<string, unknown>, last: number): Record<string, unknown> }>> = {
  watchEvents: { position: (item) => (item as UiEvent).seq, after: (input, last) => ({ ...input, after: last }) },
};

/** Ids of live events remembered per watch; older ones are long finished. */
const MAX_STARTED = 256;

/**
 * Whether a live-text item may be delivered: only deltas of an event whose start this watch
 * saw. On a new connection the host first replays each event being written (its start, then
 * all its text so far), so text resumes whole; deltas without a start are never patched in.
 */
function admitLiveText(w: Watch, item: LiveTextItem): boolean {
  const started = (w.started ??= new Set());
  if (item?.type === 'event_start') {
    if (typeof item.event?.id !== 'string') return false;
    started.add(item.event.id);
    if (started.size > MAX_STARTED) started.delete(started.values().next().value!);
    return true;
  }
  return item?.type === 'event_delta' && started.has(item.event_id);
}

export interface WsClientOptions {
  url: string;
  onStatus(status: ConnectionStatus): void;
}

export function createWsTransport(opts: WsClientOptions): Transport {
  let socket: WebSocket | null = null;
  let nextId = 1;
  let attempts = 0;
  let openedAt = 0;
  let unauthorised = false;
  const calls = new Map<number, PendingCall>();
  const watches = new Set<Watch>();
  const byWireId = new Map<number, Watch>();
  const openListeners = new Set<() => void>();

  const send = (message: object) => socket?.send(JSON.stringify(message));
  const isOpen = () => socket?.readyState === WebSocket.OPEN;

  function sendWatch(w: Watch) {
    const id = nextId++;
    w.wireId = id;
    w.started = undefined;
    byWireId.set(id, w);
    const resume = resumable[w.stream];
    const input = resume && w.last !== undefined ? resume.after(w.input, w.last) : w.input;
    send({ t: 'watch', id, stream: w.stream, input });
  }

  function connect() {
    opts.onStatus(attempts === 0 && openedAt === 0 ? 'connecting' : 'reconnecting');
    const ws = new WebSocket(opts.url);
    socket = ws;
    ws.onopen = () => {
      openedAt = Date.now();
      opts.onStatus('open');
      // Streams first, so a call that follows (listSessions after watchSessions) sees them running.
      watches.forEach(sendWatch);
      for (const call of calls.values()) {
        send(call.message);
        call.sent = true;
      }
      openListeners.forEach((l) => l());
    };
    ws.onmessage = (ev) => onMessage(ev.data);
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      socket = null;
      byWireId.clear();
      for (const w of watches) w.wireId = undefined;
      if (ev.code === CLOSE_UNAUTHORISED || ev.code === CLOSE_REFUSED) {
        // Trying again cannot help: the page needs the link `corral serve` printed.
        unauthorised = true;
        opts.onStatus(ev.code === CLOSE_UNAUTHORISED ? 'unauthorised' : 'refused');
        for (const call of calls.values()) call.reject(new ClientError('unauthorised', 'not authorised'));
        calls.clear();
        return;
      }
      // A call already sent may or may not have run: report it rather than send it twice.
      for (const [id, call] of calls) {
        if (!call.sent) continue;
        calls.delete(id);
        call.reject(new ClientError('disconnected', 'connection lost before the reply; the call may or may not have run'));
      }
      if (Date.now() - openedAt > 5000) attempts = 0;
      const delay = Math.min(10_000, 250 * 2 ** attempts) * (0.5 + Math.random() / 2);
      attempts++;
      opts.onStatus('reconnecting');
      setTimeout(connect, delay);
    };
  }

  function onMessage(data: unknown) {
    let msg: ServerMessage;
    try {
      msg = JSON.parse(String(data)) as ServerMessage;
    } catch {
      console.warn('corral: unreadable message from the server');
      return;
    }
    if (msg.t === 'item') {
      const w = byWireId.get(msg.id);
      if (!w) return;
      const resume = resumable[w.stream];
      if (resume) {
        const pos = resume.position(msg.item);
        if (w.last !== undefined && pos <= w.last) return;
        w.last = pos;
      }
      if (w.stream === 'watchLiveText' && !admitLiveText(w, msg.item as LiveTextItem)) return;
      try {
        w.onItem(msg.item);
      } catch (err) {
        console.error('corral: a stream listener failed:', err);
      }
    } else if (msg.t === 'result') {
      const call = calls.get(msg.id);
      if (call) {
        calls.delete(msg.id);
        if (msg.ok) call.resolve(msg.value);
        else call.reject(fromUiError(msg.error));
        return;
      }
      const w = byWireId.get(msg.id);
      if (w && !msg.ok) {
        // The stream could not start (say, an unknown session): it is over.
        byWireId.delete(msg.id);
        watches.delete(w);
        w.onError?.(msg.error);
      }
    }
  }

  function call<N extends UiCallName>(method: N, input: UiInput<N>): Promise<UiCallOutputs[N]> {
    if (unauthorised) return Promise.reject(new ClientError('unauthorised', 'not authorised'));
    return new Promise<UiCallOutputs[N]>((resolve, reject) => {
      const id = nextId++;
      const pending: PendingCall = { message: { t: 'call', id, method, input }, sent: false, resolve: resolve as (v: unknown) => void, reject };
      calls.set(id, pending);
      if (isOpen()) {
        send(pending.message);
        pending.sent = true;
      }
    });
  }

  function watch<N extends UiStreamName>(
    stream: N,
    input: UiInput<N>,
    onItem: (item: UiStreamItems[N]) => void,
    onError?: (error: UiError) => void,
  ): () => void {
    const w: Watch = { stream, input: { ...input }, onItem: onItem as (item: unknown) => void, onError };
    watches.add(w);
    if (isOpen()) sendWatch(w);
    return () => {
      if (!watches.delete(w)) return;
      if (w.wireId !== undefined) {
        byWireId.delete(w.wireId);
        if (isOpen()) send({ t: 'unwatch', id: w.wireId });
      }
    };
  }

  const api: CorralApi = bindApi(call as CallFn, watch as WatchFn);

  connect();
  return {
    kind: 'ws',
    api,
    onOpen(listener) {
      openListeners.add(listener);
      if (isOpen()) queueMicrotask(() => openListeners.has(listener) && listener());
      return () => openListeners.delete(listener);
    },
  };
}

/** `ws(s)://<this page's host>/ui/ws`. */
export function defaultSocketUrl(loc: Location = window.location): string {
  return `${loc.protocol === 'https:' ? 'wss:' : 'ws:'}//${loc.host}/ui/ws`;
}
