import type { UiError } from '../../../main/api/ui/contract';

/** What can go wrong with a call, as the UI sees it. */
export type ErrorKind = UiError['kind'] | 'disconnected' | 'unauthorised';

const KINDS: readonly string[] = ['invalid_input', 'not_found', 'internal', 'disconnected', 'unauthorised'];

/** An error from the API with a kind the UI can branch on. */
export class ClientError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export function fromUiError(error: UiError): ClientError {
  return new ClientError(isKind(error?.kind) ? error.kind : 'internal', String(error?.message ?? 'unknown error'));
}

/**
 * Any thrown value as a ClientError. Errors from the desktop preload lose their `kind` on the
 * way through the context bridge, so it is also read back from a leading `[kind] ` in the
 * message.
 */
export function toClientError(err: unknown): ClientError {
  if (err instanceof ClientError) return err;
  const { kind, message } = (typeof err === 'object' && err !== null ? err : {}) as { kind?: unknown; message?: unknown };
  const raw = typeof message === 'string' ? message : String(err);
  const tagged = /^(?:(?:Uncaught )?Error: )?\[([a-z_]+)\] ([\s\S]*)$/.exec(raw);
  if (tagged && isKind(tagged[1])) return new ClientError(tagged[1], tagged[2] ?? '');
  return new ClientError(isKind(kind) ? kind : 'internal', raw);
}

function isKind(kind: unknown): kind is ErrorKind {
  return typeof kind === 'string' && KINDS.includes(kind);
}
