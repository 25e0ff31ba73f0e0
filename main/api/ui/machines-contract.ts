/**
 * The hands panel's calls (issue #12: machines by drag and drop): discovery, dropped files
 * (checked in the host: a key goes to the vault, a config is read for its hosts), the SSH
 * connection test and host-key acceptance, attaching a machine as an environment, and giving
 * or handing over a session's hand. Spread into the one contract (contract.ts).
 */
import { z } from 'zod';
import type { DroppedSshHost } from '../../hands/attach/dropped-config';
import type { Discovery } from '../../hands/attach/discover';
import type { ProbeResult } from '../../hands/attach/probe';
import { handName } from '../http/schemas/hands';

const id = z.string().min(1).max(100);
const hostName = z.string().min(1).max(255).regex(/^[^\s@]+$/, 'a host name or address, without spaces or user@');
const port = z.number().int().min(1).max(65535);
const user = z.string().min(1).max(64).regex(/^[A-Za-z0-9._][A-Za-z0-9._-]*$/, 'a user name: letters, digits, . _ -');
const fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'a fingerprint as SHA256:… (43 base64 characters)');

export const machineSchemas = {
  /** What this machine offers: ~/.ssh/config hosts, container engines, adb devices. */
  discoverMachines: z.object({}).strict(),
  /**
   * A file dropped on the window (or picked), by its contents: the host tells a private key from
   * an ssh config. A key goes to the default vault (its passphrase with it); nothing else keeps it.
   */
  readDroppedFile: z
    .object({
      name: z.string().min(1).max(255),
      text: z.string().max(256 * 1024),
      passphrase: z.string().min(1).max(1024).optional(),
    })
    .strict(),
  /** Connects once: the host key (known, new, changed) and whether the key is accepted. */
  testSshHost: z.object({ host: hostName, port: port.optional(), user, credentialId: id.optional() }).strict(),
  /** Records a new host key the user accepted (refused when the host offers another, or a different key is on record). */
  trustHostKey: z.object({ host: hostName, port: port.optional(), user, fingerprint }).strict(),
  /** Makes an environment of a machine; an SSH host must have a trusted host key first. */
  attachMachine: z
    .object({
      name: z.string().min(1).max(256),
      machine: z.discriminatedUnion('type', [
        z.object({ type: z.literal('ssh'), host: hostName, port: port.optional(), user, credentialId: id.optional() }).strict(),
        z.object({ type: z.literal('docker'), image: z.string().min(1).max(512), docker_host: z.string().min(1).max(4096).optional() }).strict(),
        z.object({ type: z.literal('adb'), serial: z.string().min(1).max(255), adb_port: port.optional() }).strict(),
      ]),
    })
    .strict(),
  /** Gives a session a hand of an environment (a machine dropped onto it). */
  giveHand: z.object({ sessionId: id, environmentId: id, name: handName }).strict(),
  /** Hands a session's hand, live, to another session (refused while it runs a call). */
  handOverHand: z.object({ fromSessionId: id, name: handName, toSessionId: id, as: handName.optional() }).strict(),
};

export type MachineCallName = keyof typeof machineSchemas;

/** What a dropped file turned out to be. */
export type DroppedFileResult =
  | { kind: 'ssh_config'; hosts: DroppedSshHost[] }
  | { kind: 'ssh_key'; credential: { id: string; vault_id: string; display_name: string | null; key_type: string; fingerprint: string; reused: boolean } }
  | { kind: 'needs_passphrase'; message: string };

/** Hands as the UI lists them. */
interface HandRow {
  name: string;
  kind: string;
  description: string;
}

/** Output of each of the panel's calls. */
export interface MachineCallOutputs {
  discoverMachines: Discovery;
  readDroppedFile: DroppedFileResult;
  testSshHost: ProbeResult;
  trustHostKey: { status: 'recorded' | 'already_known'; recorded_in: string | null };
  attachMachine: { id: string; name: string; config: { type: string; [field: string]: unknown } };
  giveHand: HandRow[];
  handOverHand: { from: HandRow[]; to: HandRow[] };
}

export type { DroppedSshHost, Discovery, ProbeResult };
