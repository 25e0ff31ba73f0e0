import http from 'node:http';

/** A response as the throttle tests read it. */
export interface Reply {
  status: number;
  retryAfter: string | undefined;
  setCookie: string | undefined;
  /** The local port of the connection the request went over (tells connections apart). */
  localPort: number | undefined;
}

/**
 * A request over a chosen connection: `agent: false` opens a new one (closed after), a
 * keep-alive agent with one socket reuses its connection. global fetch pools connections out of
 * sight, which tests of per-connection behaviour cannot have.
 */
export function request(url: string, opts: { method?: string; headers?: Record<string, string>; agent: http.Agent | false }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent }, (res) => {
      const localPort = res.socket?.localPort;
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, setCookie: res.headers['set-cookie']?.[0], localPort }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
