import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import type { BrainChild } from '../../main/brain/supervisor';
import { createHost, type Host } from '../../main/host';
import { createLogger, logFileOf, type Logger } from '../../main/logging/logger';
import { RotatingFile } from '../../main/logging/rotating-file';
import { tmpDir } from '../helpers/tmp';

/** A logger that keeps its records in memory. */
function memoryLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, { write: (l: string) => void records.push(JSON.parse(l)) });
  return { logger, records };
}

/** Resolves once `check` holds, looked at after each record the host logs or appends. */
function until(host: Host, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (check()) return resolve();
    const stop = host.log.subscribeAll(() => {
      if (!check()) return;
      stop();
      resolve();
    });
  });
}

describe('the request log', () => {
  const apiKey = 'corral-planted-key-5b1d7e';
  const marker = 'PLANTED-BODY-9f3a61';
  let dataDir: string;
  let host: Host;
  let server: RunningServer;
  beforeAll(async () => {
    dataDir = tmpDir();
    const rendererDir = tmpDir();
    fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
    host = createHost({ dataDir, logger: createLogger({ dataDir }) });
    server = await startServer(host, { port: 0, apiKey, rendererDir });
  });
  afterAll(async () => {
    await server.close();
    await host.close();
  });
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${server.url}${p}`, { ...init, headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...init.headers } });
  const lines = () => fs.readFileSync(logFileOf(dataDir), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  it('logs method, path, status, time and request id of each request, and the session lifecycle', async () => {
    const agent = (await (await api('/v1/agents', { method: 'POST', body: JSON.stringify({ name: marker, model: 'm', system: marker }) })).json()) as { id: string };
    const env = (await (await api('/v1/environments', { method: 'POST', body: JSON.stringify({ name: 'e' }) })).json()) as { id: string };
    const res = await api('/v1/sessions', { method: 'POST', body: JSON.stringify({ agent: agent.id, environment_id: env.id, title: marker }) });
    const session = (await res.json()) as { id: string };
    expect((await api(`/v1/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api('/v1/agents/agent_nope')).status).toBe(404);

    const requests = lines().filter((l) => l.msg === 'request');
    const create = requests.find((l) => l.method === 'POST' && l.path === '/v1/sessions');
    expect(create).toMatchObject({ level: 'info', status: 200, req_id: res.headers.get('request-id') });
    expect(typeof create!.ms).toBe('number');
    expect(requests.find((l) => l.path === '/v1/agents/agent_nope')).toMatchObject({ method: 'GET', status: 404 });
    const lifecycle = lines().filter((l) => l.session_id === session.id).map((l) => l.msg);
    expect(lifecycle).toEqual(['session created', 'session deleted']);
  });

  it('never writes a key, a cookie, a link token or a body', async () => {
    await api('/v1/agents', { headers: { authorization: `Bearer ${apiKey}`, cookie: `corral_ui=${marker}` } });
    await fetch(`${server.url}/?token=${apiKey}`, { redirect: 'manual' });
    await fetch(`${server.url}/?token=${marker}`, { redirect: 'manual' });
    await api('/v1/agents', { method: 'POST', body: `{"name": "${marker}", "bogus": "${marker}"}` });
    await api('/v1/agents', { method: 'POST', body: `{"name": "${marker}` });
    const text = fs.readFileSync(logFileOf(dataDir), 'utf8');
    expect(text).toContain('"path":"/"');
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(marker);
    expect(text).not.toContain('token=');
  });

  it('answers GET /health without a key, with no secrets in it', async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(JSON.stringify(body)).not.toContain(apiKey);
    expect(JSON.stringify(body)).not.toContain(dataDir);
  });

  it('logs an aborted upload as a closed connection, with no stack', async () => {
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => {
        socket.write(`POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nx-api-key: ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"name": "`);
        // Closed once the server has started reading the body (its request line is logged later).
        setImmediate(() => socket.destroy());
        socket.on('close', () => resolve());
      });
      socket.on('error', reject);
    });
    // The aborted request is logged when the server gives up on it; a later request follows it.
    await new Promise<void>((resolve) => {
      const poll = () => (lines().some((l) => l.msg === 'client closed the connection mid-request') ? resolve() : setTimeout(poll, 20));
      poll();
    });
    const text = fs.readFileSync(logFileOf(dataDir), 'utf8');
    expect(text).not.toMatch(/"level":"error"/);
    expect(text).not.toContain('"stack"');
  });
});

describe('brain and hand failures', () => {
  it('logs brain starts, crashes, restarts and a crash loop', async () => {
    const { logger, records } = memoryLogger();
    // A brain that exits with code 1 as soon as it starts, every time.
    const spawn = (): BrainChild => ({
      send() {},
      onMessage() {},
      onExit: (l) => void setTimeout(() => l(1, null), 1),
      kill() {},
      pid: 4242,
    });
    const host = createHost({ dataDir: tmpDir(), brains: { spawn, maxRestartsPerMinute: 2 }, logger });
    try {
      const { session } = host.log.createSession({}, [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }]);
      await until(host, () => host.log.getEvents(session.id, { types: ['session.error'] }).length > 0);
      const mine = records.filter((r) => r.session_id === session.id);
      const count = (msg: string) => mine.filter((r) => r.msg === msg).length;
      expect(count('brain started')).toBe(3);
      expect(count('brain crashed')).toBe(3);
      expect(mine.find((r) => r.msg === 'brain crashed')).toMatchObject({ level: 'warn', code: 1, pid: 4242 });
      expect(count('brain stopped with work pending: starting a new one')).toBe(2);
      expect(mine.find((r) => String(r.msg).startsWith('brain crash loop'))).toMatchObject({ level: 'error', restarts: 3 });
      expect(mine.find((r) => r.msg === 'session error')).toMatchObject({ level: 'warn', error_type: 'unknown_error' });
      expect(mine.filter((r) => r.msg === 'session status').map((r) => r.status)).toEqual(['idle']);
    } finally {
      await host.close();
    }
  });

  it('logs a hand that cannot be provisioned', async () => {
    const { logger, records } = memoryLogger();
    const host = createHost({ dataDir: tmpDir(), logger });
    try {
      const env = host.environments.create({ name: 'gone', config: { type: 'local' } });
      const { session } = host.log.createSession({ environment_id: env.id });
      host.environments.delete(env.id);
      const outcome = await host.hands.execute(session.id, undefined, 'bash', { command: 'true' });
      expect(outcome.isError).toBe(true);
      expect(records.find((r) => r.msg === 'hand provisioning failed')).toMatchObject({ level: 'warn', session_id: session.id, hand: 'main', error: expect.stringContaining('no longer exists') });
    } finally {
      await host.close();
    }
  });
});

describe('the rotating log file', () => {
  it('creates nothing before the first line, rotates by size and keeps the newest files', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'logs', 'corral.log');
    const out = new RotatingFile(file, { maxBytes: 100, keep: 2 });
    expect(fs.existsSync(path.join(dir, 'logs'))).toBe(false);
    const line = (i: number) => `{"n":${String(i).padStart(3, '0')},"pad":"${'x'.repeat(20)}"}\n`; // 40 bytes
    for (let i = 0; i < 20; i++) out.write(line(i));
    out.close();
    expect(fs.readdirSync(path.join(dir, 'logs')).sort()).toEqual(['corral.log', 'corral.log.1', 'corral.log.2']);
    for (const f of ['corral.log', 'corral.log.1', 'corral.log.2']) expect(fs.statSync(path.join(dir, 'logs', f)).size).toBeLessThanOrEqual(100);
    // Two lines per file: the newest two in corral.log, the two before in .1, and so on.
    expect(fs.readFileSync(file, 'utf8')).toBe(line(18) + line(19));
    expect(fs.readFileSync(`${file}.1`, 'utf8')).toBe(line(16) + line(17));
    expect(fs.readFileSync(`${file}.2`, 'utf8')).toBe(line(14) + line(15));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('continues a file that is there and never throws into the caller', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'corral.log');
    fs.writeFileSync(file, 'x'.repeat(90));
    const out = new RotatingFile(file, { maxBytes: 100 });
    out.write('0123456789\n'); // 101 bytes in all: rotated first
    expect(fs.readFileSync(`${file}.1`, 'utf8')).toBe('x'.repeat(90));
    out.close();
    // A log path that cannot be a file: the line is dropped, nothing is thrown.
    const blocked = new RotatingFile(path.join(file, 'under-a-file.log'));
    const warn = process.stderr.write;
    process.stderr.write = () => true;
    try {
      expect(blocked.write('lost\n')).toBe(true);
    } finally {
      process.stderr.write = warn;
    }
  });
});
