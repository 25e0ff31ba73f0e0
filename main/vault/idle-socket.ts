import type net from 'node:net';

/**
 * Watches a kept-alive connection while it waits for its next request: closed by its server,
 * failed, or sent something nobody asked for, it is no longer usable and `gone` is called (an
 * error then is no one's). Unref'd meanwhile, so a kept connection does not keep the process
 * alive. Returns what undoes the watch (and the unref's effect is undone by `ref()` on use).
 * Shared by the brain's client of the model proxy and the proxy's connections upstream.
 */
export function watchIdle(socket: net.Socket, gone: () => void): () => void {
  socket.on('close', gone);
  socket.on('error', gone);
  socket.on('data', gone);
  socket.unref();
  return () => {
    socket.off('close', gone);
    socket.off('error', gone);
    socket.off('data', gone);
  };
}
