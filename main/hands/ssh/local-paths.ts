/** Facts about this machine an ssh config refers to: the local user, `~`, % tokens. */
import os from 'node:os';
import path from 'node:path';

export const DEFAULT_SSH_PORT = 22;

export function localUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? 'root';
  }
}

/** Expands `~` and the % tokens ssh allows in IdentityFile / UserKnownHostsFile; relative paths are under ~/.ssh. */
export function expandPath(p: string, ctx: { home: string; host: string; port: number; user: string }): string {
  let out = p.replace(/%(.)/g, (m, c: string) => {
    switch (c) {
      case '%':
        return '%';
      case 'd':
        return ctx.home;
      case 'h':
        return ctx.host;
      case 'p':
        return String(ctx.port);
      case 'r':
        return ctx.user;
      case 'u':
        return localUserName();
      default:
        return m;
    }
  });
  if (out === '~') out = ctx.home;
  else if (out.startsWith('~/')) out = path.join(ctx.home, out.slice(2));
  return path.isAbsolute(out) ? out : path.join(ctx.home, '.ssh', out);
}
