// bench:brain's UI watcher (BENCH_UI_WATCH=1), in its own process as the app's window is: it
// watches one session's events over the UI WebSocket and counts them. Args: base URL, cookie,
// origin, session id. Sends 'ready' once the watch is asked for, and its count when asked.
import WebSocket from 'ws';

const [base, cookie, origin, sessionId] = process.argv.slice(2) as [string, string, string, string];
const socket = new WebSocket(`${base.replace('http', 'ws')}/ui/ws`, { headers: { cookie, origin } });
let items = 0;
socket.on('open', () => {
  socket.send(JSON.stringify({ t: 'watch', id: 1, stream: 'watchEvents', input: { sessionId } }));
  // The watch is set up on the host's next turns; a short wait makes sure it sees the first event live.
  setTimeout(() => process.send!({ t: 'ready' }), 200);
});
socket.on('message', (data) => {
  if ((JSON.parse(String(data)) as { t: string }).t === 'item') items++;
});
socket.on('error', (err) => {
  console.error(`ui-watcher: ${err.message}`);
  process.exit(1);
});
process.on('message', (m: { t: string }) => {
  if (m.t === 'count') process.send!({ t: 'count', items });
});
