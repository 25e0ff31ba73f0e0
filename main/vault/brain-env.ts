import { brainEnv } from '../child-env';

/**
 * The environment a brain process starts with. It holds no secret: names that look like one
 * (keys, tokens, passwords, passphrases) and the ssh-agent socket are left out, and the model
 * key is replaced by a capability for the host's model proxy, bound to the session and revoked
 * when the brain exits.
 *
 * `forkBrain` is a free function (it has no host to ask), so hosts register here: the host
 * whose log holds the session gives the capability. Session ids are unique across data
 * folders, so several hosts in one process (tests) do not mix up their brains.
 */

/** Something that can give a session's brain its model access. */
export interface BrainEnvProvider {
  /** Undefined when this provider does not serve the session. */
  envFor(sessionId: string): { env: Record<string, string>; release(): void } | undefined;
}

const providers = new Set<BrainEnvProvider>();

export function registerBrainEnvProvider(p: BrainEnvProvider): () => void {
  providers.add(p);
  return () => providers.delete(p);
}

/** Environment variables never passed to a brain. */
export const BRAIN_SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE|CREDENTIAL|^SSH_AUTH_SOCK$/i;

/** The environment a brain starts with before it has a session (a pooled brain): no capability. */
export function brainBaseEnvironment(base: NodeJS.ProcessEnv = brainEnv()): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined && !BRAIN_SECRET_NAME.test(name)) env[name] = value;
  return env;
}

/**
 * A session's model capability, as variables (the proxy's URL and a token bound to the session),
 * and its revocation, to call when the brain holding it exits. A pooled brain gets these over
 * IPC when it is bound to a session (brain-pool.ts); a brain forked for a session, in its env.
 */
export function brainCapability(sessionId: string): { env: Record<string, string>; release: () => void } {
  for (const p of providers) {
    const got = p.envFor(sessionId);
    if (!got) continue;
    let released = false;
    return {
      env: got.env,
      release: () => {
        if (released) return;
        released = true;
        got.release();
      },
    };
  }
  return { env: {}, release: () => {} };
}

/**
 * The environment to fork a session's brain with, and what to call when it exits: the host's
 * allowlisted variables (child-env.ts), less anything named like a secret, plus the capability.
 */
export function brainEnvironment(sessionId: string, base: NodeJS.ProcessEnv = brainEnv()): { env: NodeJS.ProcessEnv; release: () => void } {
  const cap = brainCapability(sessionId);
  return { env: { ...brainBaseEnvironment(base), ...cap.env }, release: cap.release };
}
