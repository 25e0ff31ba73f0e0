/**
 * Which live hands carry their session's routes to its vaults: the egress proxy's URL (with the
 * session's capability) in their environment, the sandbox gateway's names, or a clone whose
 * remote is the git proxy. Such a hand cannot pass to another session live: the receiver's agent
 * would use the giver's credentials, and a session may use only the vaults it names.
 */
import { HandRequestError } from './membership';

export class VaultRoutes {
  private readonly carrying = new WeakMap<object, string>();
  private readonly pending = new WeakSet<object>();

  /** Follows a hand's provisioning: until it settles, what it will carry is not known. */
  provisioning(live: object, ready: Promise<unknown>): void {
    this.pending.add(live);
    const settled = () => void this.pending.delete(live);
    ready.then(settled, settled);
  }

  /** Records that `live` carries `what` of its session's (the first reason is kept). */
  mark(live: object, what: string): void {
    if (!this.carrying.has(live)) this.carrying.set(live, what);
  }

  /** Marks when a hand's environment holds the egress proxy (placeholders alone carry nothing). */
  markEnv(live: object, env: Record<string, string> | undefined): void {
    if (env?.HTTP_PROXY !== undefined || env?.HTTPS_PROXY !== undefined) this.mark(live, "its environment holds the session's egress proxy");
  }

  /** Throws the refusal for passing `live` (hand `name` of `from`) to `to` live; nothing when it may. */
  checkHandOver(live: object, name: string, from: string, to: string): void {
    if (this.pending.has(live)) {
      throw new HandRequestError('invalid', `hand '${name}' is still being provisioned in session ${from}; hand it over once it is ready`);
    }
    const what = this.carrying.get(live);
    if (what) {
      throw new HandRequestError(
        'invalid',
        `hand '${name}' cannot be handed over live: ${what}, and session ${to} may use only its own vaults. Release it and give session ${to} a fresh hand of the environment instead`,
      );
    }
  }
}
