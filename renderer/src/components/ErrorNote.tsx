import type { ClientError } from '../api/errors';

const HINTS: Partial<Record<ClientError['kind'], string>> = {
  not_found: 'Not found',
  invalid_input: 'Rejected',
  disconnected: 'Connection lost',
  unauthorised: 'Not authorised',
  internal: 'Failed',
};

/** An error as a short line: what kind of failure, and the host's message. */
export function ErrorNote({ error, onRetry }: { error: ClientError; onRetry?: () => void }) {
  return (
    <div className="error-note" role="alert" data-testid="error" data-kind={error.kind}>
      <strong>{HINTS[error.kind] ?? 'Error'}:</strong> <span>{error.message}</span>
      {onRetry && (
        <button type="button" className="link" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
