/** Shown when the server refuses this page (WebSocket closed with 4401). */
export function AuthRequired() {
  return (
    <main className="auth-required" data-testid="auth-required" role="alert">
      <h1>Not authorised</h1>
      <p>
        This page has no access to the Corral server. Open the link that <code>corral serve</code> printed.
      </p>
      <p className="muted">That link carries a one-time token; opening it sets the cookie this page needs.</p>
    </main>
  );
}
