import type { ConnectionStatus } from '../api/transport';

/** A thin line above the app while the host is not reachable. */
export function ConnectionBanner({ status }: { status: ConnectionStatus }) {
  if (status === 'open') return null;
  const text =
    status === 'connecting'
      ? 'Connecting to the Corral host…'
      : status === 'refused'
        ? 'The server refused this page (it is not served from the server’s own address).'
        : 'Connection lost; reconnecting…';
  return (
    <div className={`banner banner-${status}`} role="status" data-testid="connection-status" data-status={status}>
      {text}
    </div>
  );
}
