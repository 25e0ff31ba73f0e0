import { UI_CALLS, UI_STREAMS, type UiCallName, type UiStreamName } from './methods';
import { toUiError, type StreamFlow, type UiService } from './service';

const CLOSE_BRACE = Buffer.from('}');

/** Largest message a UI client may send. */
const MAX_MESSAGE = 2 * 1024 * 1024;

/**
 * The renderer's API over a message socket (serve mode's WebSocket). Protocol:
 * `{t:'call',id,method,input}` → `{t:'result',id,ok,value|error}`;
 * `{t:'watch',id,stream,input}` → `{t:'item',id,item}`… (or a failed result);
 * `{t:'unwatch',id}`. Every input is validated by the UI service against the contract.
 */
export function openUiChannel(
  ui: UiService,
  send: (text: string) => void,
  flow?: StreamFlow,
  /** Sends one text message made of these UTF-8 parts, in order (a socket can, without joining them). */
  sendParts?: (parts: readonly Buffer[]) => void,
): { onMessage(text: string): void; close(): void } {
  const watches = new Map<number, () => void>();
  const reply = (msg: unknown) => send(JSON.stringify(msg));

  return {
    onMessage(text) {
      if (text.length > MAX_MESSAGE) return reply({ t: 'result', id: null, ok: false, error: { kind: 'invalid_input', message: 'message too large' } });
      let msg: { t?: unknown; id?: unknown; method?: unknown; stream?: unknown; input?: unknown };
      try {
        msg = JSON.parse(text) as typeof msg;
      } catch {
        return reply({ t: 'result', id: null, ok: false, error: { kind: 'invalid_input', message: 'message is not JSON' } });
      }
      const id = msg?.id; // `null` and other non-objects are JSON too
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
        return reply({ t: 'result', id: null, ok: false, error: { kind: 'invalid_input', message: 'message needs a numeric id' } });
      }
      const fail = (message: string) => reply({ t: 'result', id, ok: false, error: { kind: 'invalid_input', message } });
      if (msg.t === 'call') {
        if (!(UI_CALLS as readonly unknown[]).includes(msg.method)) return fail(`unknown method ${JSON.stringify(msg.method)}`);
        ui.call(msg.method as UiCallName, msg.input).then(
          (value) => reply({ t: 'result', id, ok: true, value }),
          (err) => reply({ t: 'result', id, ok: false, error: toUiError(err) }),
        );
      } else if (msg.t === 'watch') {
        if (!(UI_STREAMS as readonly unknown[]).includes(msg.stream)) return fail(`unknown stream ${JSON.stringify(msg.stream)}`);
        if (watches.has(id)) return fail(`watch id ${id} is in use`);
        try {
          watches.set(id, () => {});
          // An item given as JSON goes into the message as it is: a 4 MiB event is neither parsed
          // to be stringified again nor copied into one string.
          const head = Buffer.from(`{"t":"item","id":${id},"item":`);
          const pushJson = sendParts && ((json: readonly Buffer[]) => sendParts([head, ...json, CLOSE_BRACE]));
          const stop = ui.watch(msg.stream as UiStreamName, msg.input, (item) => reply({ t: 'item', id, item }), flow, pushJson);
          watches.set(id, stop);
        } catch (err) {
          watches.delete(id);
          reply({ t: 'result', id, ok: false, error: toUiError(err) });
        }
      } else if (msg.t === 'unwatch') {
        watches.get(id)?.();
        watches.delete(id);
      } else {
        fail(`unknown message type ${JSON.stringify(msg.t)}`);
      }
    },
    close() {
      for (const stop of watches.values()) stop();
      watches.clear();
    },
  };
}
