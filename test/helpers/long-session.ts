import { uiServiceFor, type UiService } from '../../main/api/ui/service';
import type { EventInput } from '../../main/session/types';
import { startTestServer, type TestServer } from './server';

/**
 * The harness of test/api/long-session-*.test.ts: a test server with one long session (tens of
 * thousands of events), and a 1 ms timer that shows whether the host's event loop keeps turning
 * while a call reads it.
 */

/** A test server holding one long session, and the UI service to call it through. */
export interface LongSession {
  t: TestServer;
  ui: UiService;
  sessionId: string;
  /** The local environment the session runs in (hand events name it). */
  envId: string;
  /** The session's last position once every turn is written. */
  last: number;
}

/**
 * Starts a test server and writes `turns` turns into one new session, each turn the events
 * `eventsOf` gives for it, written a thousand or so at a time.
 */
export async function startLongSession(eventsOf: (turn: number, envId: string) => EventInput[], turns = 8000): Promise<LongSession> {
  const t = await startTestServer();
  const ui = uiServiceFor(t.host);
  const agent = await ui.call('createAgent', { name: 'long', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  const env = await ui.call('createEnvironment', { name: 'here', config: { type: 'local' } });
  const s = await ui.call('createSession', { session: { agent: agent.id, environment_id: env.id } });
  let batch: EventInput[] = [];
  for (let turn = 0; turn < turns; turn++) {
    batch.push(...eventsOf(turn, env.id));
    if (batch.length >= 1000) {
      t.host.log.emitEvents(s.id, batch);
      batch = [];
    }
  }
  if (batch.length) t.host.log.emitEvents(s.id, batch);
  return { t, ui, sessionId: s.id, envId: env.id, last: t.host.log.getSession(s.id).last_seq };
}

/** Runs `call` and counts how often a 1 ms timer fired while it was pending. */
export async function ticksDuring<T>(call: () => Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const value = await call();
    return { value, ticks };
  } finally {
    clearInterval(timer);
  }
}
