import { describe, expect, it } from 'vitest';
import { buildRequest, type ContextOptions } from '../../main/brain/context';
import { ContextBuilder } from '../../main/brain/context-builder';
import type { LoggedEvent } from '../../main/session/types';
import { validateMessagesRequest } from '../fixtures/model-server';

const opts: ContextOptions = { model: 'm', system: 'be brief', tools: [{ name: 'bash', description: 'run', input_schema: { type: 'object', properties: {} } }], maxTokens: 100, contextWindowTokens: 200_000 };

/** A log from short descriptions: each gets the next seq and an id `e<seq>`. */
function log(...events: Omit<LoggedEvent, 'seq' | 'id' | 'processed_at'>[]): LoggedEvent[] {
  return events.map((e, i) => ({ id: `e${i + 1}`, processed_at: '', seq: i + 1, ...e }) as LoggedEvent);
}
const text = (t: string) => [{ type: 'text', text: t }];
const user = (t: string) => ({ type: 'user.message', content: text(t) });
const said = (t: string) => ({ type: 'agent.message', content: text(t) });
const call = (id: string) => ({ type: 'agent.tool_use', name: 'bash', input: { command: id }, _id: id });
const result = (toolUseId: string, out: string) => ({ type: 'agent.tool_result', tool_use_id: toolUseId, content: text(out), is_error: false });
const marks = (v: unknown): number => JSON.stringify(v).split('"cache_control"').length - 1;

describe('buildRequest (the pure reference)', () => {
  it('groups consecutive events of one role into one message and starts with the user', () => {
    const events = log(said('left over'), user('a'), user('b'), said('c'), { type: 'span.model_request_end' }, said('d'), user('e'));
    const { params, contextSeq } = buildRequest(events, opts);
    expect(params.messages.map((m) => [m.role, m.content.map((b) => b.text)])).toEqual([
      ['user', ['a', 'b']],
      ['assistant', ['c', 'd']],
      ['user', ['e']],
    ]);
    expect(contextSeq).toBe(7);
    expect(validateMessagesRequest(params)).toBeNull();
  });

  it('puts tool results first in their user message, in log order', () => {
    const events = log(user('go'), call('x'), call('y'), result('e2', 'X'), user('typed meanwhile'), result('e3', 'Y'));
    const last = buildRequest(events, opts).params.messages.at(-1)!;
    expect(last.content.map((b) => b.type + (b.tool_use_id ? `:${b.tool_use_id}` : ''))).toEqual(['tool_result:e2', 'tool_result:e3', 'text']);
    expect(validateMessagesRequest(buildRequest(events, opts).params)).toBeNull();
  });

  it('a trailing assistant message is a prefill without trailing white space, thinking or blank text', () => {
    const thinking = { type: 'agent.thinking', thinking: 'hmm', signature: 'sig' };
    const events = log(user('go'), said('Partial answer  \n'), thinking, said('   '));
    const tail = buildRequest(events, opts).params.messages.at(-1)!;
    expect(tail).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Partial answer' }] });
    // Nothing left to continue: no prefill at all.
    const blank = buildRequest(log(user('go'), thinking, said('  ')), opts).params.messages;
    expect(blank.map((m) => m.role)).toEqual(['user']);
  });

  it('replays thinking only with its signature', () => {
    const events = log(user('go'), { type: 'agent.thinking', thinking: 'signed', signature: 'sig' }, { type: 'agent.thinking', thinking: 'unsigned' }, { type: 'agent.thinking', redacted: true }, said('ok'), user('next'));
    const assistant = buildRequest(events, opts).params.messages[1]!;
    expect(assistant.content).toEqual([{ type: 'thinking', thinking: 'signed', signature: 'sig' }, { type: 'text', text: 'ok' }]);
  });

  it('sets cache breakpoints on the tools, the system prompt and the last two user turns: at most 4', () => {
    const events = log(user('one'), said('1'), user('two'), call('c'), result('e4', 'out'), said('3'), user('four'));
    const { params } = buildRequest(events, opts);
    expect(params.tools!.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    expect(params.system!.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    const userTurns = params.messages.filter((m) => m.role === 'user');
    expect(userTurns.map((m) => m.content.at(-1)!.cache_control !== undefined)).toEqual([false, false, true, true]);
    expect(marks(params)).toBe(4);
    expect(validateMessagesRequest(params)).toBeNull();
    // Without tools or system: only the user turns.
    expect(marks(buildRequest(events, { ...opts, tools: [], system: null }).params)).toBe(2);
  });

  it('elides the oldest tool results first, in the request only, with a note naming read_session_events', () => {
    const big = 'x'.repeat(4000);
    const events = log(user('go'), call('a'), result('e2', big), call('b'), result('e4', big), call('c'), result('e6', big), said('done'));
    const small = { ...opts, contextWindowTokens: 1600, maxTokens: 100 };
    const built = buildRequest(events, small);
    expect(built.elidedSeqs).toEqual([3, 5]);
    const results = built.params.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_result');
    expect((results[0]!.content as { text: string }[])[0]!.text).toMatch(/^\[elided from this request to fit the context window: \d+ characters\. Read it again with read_session_events \{"from": 3, "to": 3\}\]$/);
    expect((results[2]!.content as { text: string }[])[0]!.text).toBe(big);
    expect(built.estimatedTokens).toBeLessThanOrEqual(1500);
    // The log's events are untouched.
    expect((events[2]!.content as { text: string }[])[0]!.text).toBe(big);
    // The newest message is never elided, even when the request stays too big.
    const tiny = buildRequest(log(user('go'), call('a'), call('b'), result('e2', big), result('e3', big)), small);
    expect(tiny.elidedSeqs).toEqual([]);
    expect(tiny.estimatedTokens).toBeGreaterThan(1500);
  });
});

// ---------------------------------------------------------------------------------------------
// The incremental builder against the reference.

/** Deterministic PRNG (mulberry32): a failing seed can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random log: turns of messages, thinking (signed or not), tool calls with outputs of any size, status and span events. */
function randomLog(random: () => number, length: number): LoggedEvent[] {
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(['alpha', 'beta', 'gamma', ' ', '\n', 'delta'])).join(' ');
  const out: LoggedEvent[] = [];
  const open: string[] = [];
  const add = (e: Record<string, unknown>) => out.push({ id: `sevt_${out.length + 1}`, processed_at: '', seq: out.length + 1, type: '', ...e } as LoggedEvent);
  while (out.length < length) {
    const r = random();
    if (r < 0.12) add({ type: 'user.message', content: [{ type: 'text', text: words(1 + Math.floor(random() * 20)) }] });
    else if (r < 0.15) add({ type: 'system.message', content: [{ type: 'text', text: words(3) }] });
    else if (r < 0.3) add({ type: 'agent.message', content: [{ type: 'text', text: pick([words(8), '  ', 'trailing  \n', words(40)]) }] });
    else if (r < 0.36) add({ type: 'agent.thinking', thinking: words(5), ...(random() < 0.7 ? { signature: 'sig' } : {}) });
    else if (r < 0.55) {
      add({ type: pick(['agent.tool_use', 'agent.tool_use', 'agent.custom_tool_use']), name: 'bash', input: { command: words(3) } });
      open.push(out.at(-1)!.id);
    } else if (r < 0.8 && open.length) {
      const id = open.splice(Math.floor(random() * open.length), 1)[0]!;
      const size = pick([0, 10, 300, 3000, 12_000]);
      add({ type: 'agent.tool_result', tool_use_id: id, content: size ? [{ type: 'text', text: 'o'.repeat(size) }] : [], is_error: random() < 0.1 });
    } else if (r < 0.83) add({ type: 'user.custom_tool_result', custom_tool_use_id: 'x', content: [{ type: 'text', text: words(2) }] });
    else add({ type: pick(['span.model_request_start', 'span.model_request_end', 'session.status_running', 'session.status_idle', 'hand.ready']) });
  }
  return out;
}

describe('ContextBuilder (incremental)', () => {
  it('for random logs and random split points, each request deep-equals buildRequest of the same events', () => {
    const windows = [1_500, 4_000, 12_000, 200_000];
    let elided = 0;
    let dropped = 0;
    let prefills = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const random = rng(seed);
      const events = randomLog(random, 20 + Math.floor(random() * 180));
      const options = { ...opts, contextWindowTokens: windows[seed % windows.length]!, maxTokens: 200 };
      const splits = [...new Set(Array.from({ length: 1 + Math.floor(random() * 6) }, () => Math.floor(random() * events.length)))].sort((a, b) => a - b);
      splits.push(events.length);
      const builder = new ContextBuilder();
      let folded = 0;
      for (const at of splits) {
        while (folded < at) builder.fold(events[folded++]!);
        const incremental = structuredClone(builder.build(options));
        const reference = buildRequest(events.slice(0, at), options);
        expect(incremental, `seed ${seed}, split at ${at}`).toEqual(reference);
        elided += reference.elidedSeqs.length;
        if (reference.droppedThrough !== undefined) dropped += 1;
        if (reference.params.messages.at(-1)?.role === 'assistant') prefills++;
      }
    }
    // The logs exercised elision, dropped turns and prefills, not only the easy cases.
    expect(elided).toBeGreaterThan(100);
    expect(dropped).toBeGreaterThan(20);
    expect(prefills).toBeGreaterThan(20);
  });

  it('elision is monotonic while the request starts at the same place; the start only moves on', () => {
    const random = rng(7);
    const events = randomLog(random, 400);
    const builder = new ContextBuilder();
    let before: number[] = [];
    let start = 0;
    let moves = 0;
    let mostElided = 0;
    for (const e of events) {
      builder.fold(e);
      const { elidedSeqs, droppedThrough = 0 } = builder.build({ ...opts, contextWindowTokens: 3_000 });
      expect(droppedThrough).toBeGreaterThanOrEqual(start);
      if (droppedThrough === start) expect(elidedSeqs.slice(0, before.length)).toEqual(before);
      else moves += 1;
      // Nothing elided lies before the start.
      expect(elidedSeqs.every((seq) => seq > droppedThrough)).toBe(true);
      before = elidedSeqs;
      start = droppedThrough;
      mostElided = Math.max(mostElided, elidedSeqs.length);
    }
    expect(mostElided).toBeGreaterThan(10);
    expect(moves).toBeGreaterThan(2);
  });

  it('a session longer than the window: the oldest turns are dropped in steps, the request fits and stays valid', () => {
    const events: LoggedEvent[] = [];
    const add = (e: Record<string, unknown>) => events.push({ id: `sevt_${events.length + 1}`, processed_at: '', seq: events.length + 1, ...e } as LoggedEvent);
    for (let turn = 0; events.length < 20_000; turn++) {
      add({ type: 'user.message', content: text(`turn ${turn}: ${'please '.repeat(turn % 7)}go on`) });
      for (let k = 0; k < 4; k++) {
        add({ type: 'agent.message', content: text(`step ${k} of ${turn}: ${'reasoning '.repeat(10 + ((turn + k) % 20))}`) });
        add({ type: 'agent.tool_use', name: 'bash', input: { command: `grep -rn step${k} src | head -${turn % 50}` } });
        add({ type: 'agent.tool_result', tool_use_id: events.at(-1)!.id, content: text('o'.repeat(100 + ((turn * 7 + k) % 9) * 400)), is_error: false });
      }
      add({ type: 'agent.message', content: text(`turn ${turn} done`) });
      add({ type: 'span.model_request_end' });
    }
    const options = { ...opts, contextWindowTokens: 20_000, maxTokens: 1_000 };
    const budget = options.contextWindowTokens - options.maxTokens;
    const builder = new ContextBuilder();
    const starts = new Set<number>();
    let compared = 0;
    let results = 0;
    for (const [i, e] of events.entries()) {
      builder.fold(e);
      const built = builder.build(options);
      if (built.droppedThrough !== undefined) starts.add(built.droppedThrough);
      // Checked where a model request is made: after a tool result (every 25th).
      if (e.type !== 'agent.tool_result' || results++ % 25 !== 0) continue;
      expect(validateMessagesRequest(built.params), `after event ${e.seq}`).toBeNull();
      expect(built.estimatedTokens).toBeLessThanOrEqual(budget);
      expect(Math.ceil(JSON.stringify(built.params).length / 4)).toBeLessThanOrEqual(options.contextWindowTokens);
      if (results % 400 === 1) {
        expect(structuredClone(built), `after event ${e.seq}`).toEqual(buildRequest(events.slice(0, i + 1), options));
        compared += 1;
      }
    }
    const last = buildRequest(events, options);
    const [note, first] = last.params.messages;
    expect(last.droppedThrough).toBeGreaterThan(15_000);
    expect(String(note!.content[0]!.text)).toBe(
      `[This session is longer than the context window: its events 1 to ${last.droppedThrough} are not in this request (the oldest turns go first, in steps). The user's first message is event 1. Read any of them with read_session_events, e.g. {"from": 1, "to": 1}.]`,
    );
    // The request goes on from the event after the last one dropped, with an assistant message.
    expect(first!.role).toBe('assistant');
    expect(events[last.droppedThrough!]!.type).toMatch(/^agent\./);
    // In steps: each new start drops a quarter of the budget or more, so the cached prefix holds
    // for many requests (the log holds about 2.2 M characters as elided; a step is 19 k).
    expect(starts.size).toBeGreaterThan(20);
    expect(starts.size).toBeLessThan(events.length / 50);
    expect(compared).toBeGreaterThan(8);
  });

  it('keeps no marks or trims in its transcript: a request is the same built twice', () => {
    const events = log(user('go'), said('partial  '), { type: 'agent.thinking', thinking: 't', signature: 's' });
    const builder = new ContextBuilder();
    for (const e of events) builder.fold(e);
    const first = structuredClone(builder.build(opts));
    expect(builder.build(opts)).toEqual(first);
    builder.fold({ id: 'e4', processed_at: '', seq: 4, type: 'user.message', content: text('more') });
    expect(builder.build(opts)).toEqual(buildRequest([...events, { id: 'e4', processed_at: '', seq: 4, type: 'user.message', content: text('more') }], opts));
  });
});
