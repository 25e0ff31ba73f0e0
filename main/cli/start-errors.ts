/**
 * One-line explanations, with what to do, for the ways `serve` fails to start. Each returns
 * undefined for an error it does not know (the caller then prints the error's message).
 */

/** Why the address could not be bound. */
export function listenProblem(err: unknown, hostname: string, port: number): string | undefined {
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${hostname} is in use (another corral serve?): stop that, or choose another port with --port P or CORRAL_PORT`;
    case 'EACCES':
      return `not allowed to listen on port ${port}: choose a port above 1023 with --port P or CORRAL_PORT`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on '${hostname}': it is not an address of this machine; use --host 127.0.0.1 or one of this machine's addresses`;
    default:
      return undefined;
  }
}

/** A start-up failure: one line on stderr, no stack, and this exit code. */
export class StartError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
