import { VersionConflictError } from '../../../catalog/agents';
import { HandRequestError } from '../../../hands/membership';
import { ApiError } from '../../http/errors';
import { UiServiceError } from '../service';

/**
 * Runs a host call, turning the refusals the shared HTTP logic throws (ApiError, a hand rule,
 * a version conflict) into the renderer's error kinds. Anything else passes through to the
 * service, which reports it as internal without details.
 */
export async function asUiCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) {
      if (err.type === 'api_error') throw err;
      throw new UiServiceError({ kind: err.type === 'not_found_error' ? 'not_found' : 'invalid_input', message: err.message });
    }
    if (err instanceof HandRequestError) throw new UiServiceError({ kind: err.kind === 'not_found' ? 'not_found' : 'invalid_input', message: err.message });
    if (err instanceof VersionConflictError) throw new UiServiceError({ kind: 'invalid_input', message: err.message });
    throw err;
  }
}

/** A refusal of a host call. */
export const refuse = (message: string) => new UiServiceError({ kind: 'invalid_input', message });
/** Something named that does not exist. */
export const missing = (what: string, id: string) => new UiServiceError({ kind: 'not_found', message: `${what} '${id}' was not found` });
