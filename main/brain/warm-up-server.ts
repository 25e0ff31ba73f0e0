import net from 'node:net';
import { headEnd, parseRequestHead } from '../vault/http-framing';

/** The reply the warm-up's model gives: one text block, as the Messages API streams it. */
const REPLY = [
  ['message_start', { type: 'message_start', message: { id: 'msg_warm_up', type: 'message', role: 'assistant', model: 'warm-up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ready' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }],
  ['message_stop', { type: 'message_stop' }],
]
  .map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');
const ANSWER = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(REPLY)}\r\nconnection: keep-alive\r\n\r\n${REPLY}`;

/** A model server for one request, inside the brain's own process (see warmUpFirstTurn). */
export interface WarmUpServer {
  /** Its `http://127.0.0.1:port` base URL. */
  url: string;
  close(): void;
}

/**
 * Listens on loopback for the warm-up's one connection, and answers every request on it, whatever
 * it asks, with the same short streamed reply. It takes no second connection and holds nothing:
 * whoever else reached it in its few milliseconds would get "ready" and no more.
 */
export function startWarmUpServer(): Promise<WarmUpServer> {
  return new Promise((resolve, reject) => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      server.close(); // one connection: the warm-up's
      sockets.add(socket);
      socket.on('error', () => {}); // the brain's own client hung up: nothing to report
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        // A request is its head and `content-length` bytes of body (the proxy's own framing): answer each one whole.
        for (;;) {
          const end = headEnd(pending);
          if (end < 0) return;
          const parsed = parseRequestHead(pending.subarray(0, end - 4).toString('latin1'));
          if ('status' in parsed) return void socket.destroy();
          if (pending.length < end + parsed.length) return;
          pending = pending.subarray(end + parsed.length);
          socket.write(ANSWER);
        }
      });
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.close();
          for (const s of sockets) s.destroy();
        },
      });
    });
  });
}
