import { z } from 'zod';
import { envEntryProblem, envSizeProblem } from '../../../env-vars';
import { metadata, metadataPatch } from './common';
import { neverYet, notYet } from './not-yet';

const packages = z
  .object({
    type: z.literal('packages').optional(),
    apt: z.array(z.string()).nullish(),
    cargo: z.array(z.string()).nullish(),
    gem: z.array(z.string()).nullish(),
    go: z.array(z.string()).nullish(),
    npm: z.array(z.string()).nullish(),
    pip: z.array(z.string()).nullish(),
  })
  .strict();
const networking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }).strict(),
  z
    .object({
      type: z.literal('limited'),
      allow_mcp_servers: z.boolean().nullish(),
      allow_package_managers: z.boolean().nullish(),
      allowed_hosts: z.array(z.string()).nullish(),
    })
    .strict(),
]);

const workingDir = z.string().min(1).max(4096);

/**
 * Variables set for every command on the hand (on top of PATH, HOME, USER, LANG, TERM, SHELL
 * and TMPDIR, the only ones taken from the host). Not for secrets: configs are stored and shown
 * in plain text.
 */
const envVars = z
  .record(z.string(), z.string().max(32_768))
  .superRefine((env, ctx) => {
    const entries = Object.entries(env);
    if (entries.length > 100) ctx.addIssue({ code: 'custom', message: 'at most 100 variables' });
    const size = envSizeProblem(env);
    if (size) ctx.addIssue({ code: 'custom', message: size });
    for (const [name, value] of entries) {
      const problem = envEntryProblem(name, value);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
  });

/** A host the local sandbox's proxy lets commands reach: `example.com`, `*.example.com`, with an optional `:port`. */
const allowedHost = z
  .string()
  .max(253)
  .regex(/^(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+(:\d{1,5})?$/, 'a host name like example.com or *.example.com, optionally with :port');

/** What a sandboxed local hand's commands may reach (see main/hands/local/sandbox.ts). */
const localNetworking = z
  .object({
    type: z.literal('limited'),
    allowed_hosts: z.array(allowedHost).max(256).nullish(),
    /** npm, PyPI, crates.io, Go, RubyGems, Maven Central and GitHub; on unless set to false. */
    allow_package_managers: z.boolean().nullish(),
  })
  .strict();
const hostName = z.string().min(1).max(255).regex(/^[^\s@]+$/, 'a host name or address, without spaces or user@');
const port = z.number().int().min(1).max(65535);

/**
 * Environment configs: the API's `cloud` and `self_hosted`, and Corral's own kinds. Secrets are
 * never part of a config (a key file is named by path; key contents go to the vault).
 */
export const environmentConfig = z.discriminatedUnion('type', [
  // Corral has no cloud to run it in: refused at the door, not at the first tool call.
  neverYet(z.object({ type: z.literal('cloud'), networking: networking.nullish(), packages: packages.nullish() }).strict(), "config type 'cloud'", 'no cloud containers here: use local, docker, ssh, adb or self_hosted'),
  z.object({ type: z.literal('self_hosted') }).strict(),
  z
    .object({
      type: z.literal('local'),
      /** Must lie inside the folders the host allows (by default its per-session work root). */
      working_dir: workingDir.optional(),
      /** `false` runs commands without the sandbox, on purpose (the hand then says so). */
      sandbox: z.boolean().optional(),
      networking: localNetworking.optional(),
      env: envVars.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('ssh'),
      host: hostName,
      port: port.optional(),
      user: z.string().min(1).max(64).optional(),
      /** A `Host` alias from ~/.ssh/config to resolve host, port, user and key from. */
      ssh_config_host: z.string().min(1).max(255).optional(),
      /** Path of a private key file on this machine (the key itself is never stored here). */
      identity_file: z.string().min(1).max(4096).optional(),
      /** An ssh_private_key credential of the vault to log in with (Corral's ssh config; the key stays in the host). */
      identity_credential_id: z.string().regex(/^vcrd_[A-Za-z0-9]{1,64}$/, 'an ssh_private_key credential id (vcrd_…)').optional(),
      working_dir: workingDir.optional(),
      env: envVars.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('docker'),
      image: z.string().min(1).max(512),
      working_dir: workingDir.optional(),
      /** `none` (default) leaves the container only loopback. */
      network: z.enum(['none', 'bridge', 'host']).optional(),
      memory_mb: z.number().int().min(16).max(1_048_576).optional(),
      cpus: z.number().positive().max(1024).optional(),
      /** Docker API endpoint; default `DOCKER_HOST` or the usual sockets. */
      docker_host: z.string().min(1).max(4096).optional(),
      env: envVars.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('adb'),
      serial: z.string().min(1).max(255),
      adb_host: hostName.optional(),
      adb_port: port.optional(),
      working_dir: workingDir.optional(),
      env: envVars.optional(),
    })
    .strict(),
]);
export type EnvironmentConfigParam = z.infer<typeof environmentConfig>;

/**
 * Who sees an environment. Corral has no accounts, only the holder of the host's API key, so it
 * is what the API calls an API organization: every environment is visible to that holder
 * ('organization', the default), and 'account' (visible to one account only) is refused, as
 * the hosted API refuses it for API organizations.
 */
const environmentScope = notYet(
  z.enum(['organization', 'account']).nullish(),
  "scope 'account'",
  "Corral has no accounts: like an API organization, it shows every environment to whoever holds the host's API key, which is scope 'organization'",
  (v) => v === 'organization',
);

export const environmentCreateBody = z
  .object({
    name: z.string().min(1).max(256),
    config: environmentConfig.nullish(),
    description: z.string().max(2048).nullish(),
    metadata: metadata.optional(),
    scope: environmentScope,
  })
  .strict();

export const environmentUpdateBody = z
  .object({
    name: z.string().min(1).max(256).nullish(),
    config: environmentConfig.nullish(),
    description: z.string().max(2048).nullish(),
    metadata: metadataPatch.optional(),
    scope: environmentScope,
  })
  .strict();

/** Fills the defaults the API reports (a cloud config's networking and packages). */
export function normalizeEnvironmentConfig(config: EnvironmentConfigParam | null | undefined): Record<string, unknown> {
  if (!config) return { type: 'local' };
  if (config.type !== 'cloud') return { ...config };
  const p = config.packages ?? {};
  const net = config.networking ?? { type: 'unrestricted' as const };
  return {
    type: 'cloud',
    networking:
      net.type === 'limited'
        ? {
            type: 'limited',
            allow_mcp_servers: net.allow_mcp_servers ?? false,
            allow_package_managers: net.allow_package_managers ?? false,
            allowed_hosts: net.allowed_hosts ?? [],
          }
        : net,
    packages: { type: 'packages', apt: p.apt ?? [], cargo: p.cargo ?? [], gem: p.gem ?? [], go: p.go ?? [], npm: p.npm ?? [], pip: p.pip ?? [] },
  };
}
