/**
 * Before a machine becomes an environment: is it there, and is it the machine the user means?
 * An SSH host must offer the host key the user accepted; a container engine must answer and
 * hold the image (Corral never pulls); an adb device must be listed and online.
 */
import { serverAddress } from '../adb/config';
import { createServerClient, listDevices, pickDevice } from '../adb/server';
import { connectEngine } from '../docker/engine';
import { DropError } from './dropped-config';
import { probeSshHost, type ProbeTarget } from './probe';

/** A machine as the attach form describes it. */
export type MachineSpec =
  | { type: 'ssh'; host: string; port?: number; user: string; credentialId?: string }
  | { type: 'docker'; image: string; docker_host?: string }
  | { type: 'adb'; serial: string; adb_port?: number };

/** Throws DropError saying what is wrong; resolves when the machine can be attached. */
export async function checkMachine(machine: MachineSpec, target: (m: { host: string; port?: number; user: string }) => ProbeTarget): Promise<void> {
  if (machine.type === 'ssh') {
    const k = (await probeSshHost(target(machine), [])).host_key;
    if (k.status === 'new') throw new DropError(`The host key of ${machine.host}:${machine.port ?? 22} (${k.type} ${k.fingerprint}) has not been accepted yet: test the connection and accept it first`);
    if (k.status !== 'known') {
      throw new DropError(`The host key of ${machine.host}:${machine.port ?? 22} changed: on record ${k.recorded.map((r) => r.fingerprint).join(', ') || '(revoked)'}, offered now ${k.fingerprint}. Not attached.`);
    }
    return;
  }
  if (machine.type === 'docker') {
    let engine;
    try {
      engine = await connectEngine(machine.docker_host, AbortSignal.timeout(10_000));
    } catch (err) {
      throw new DropError((err as Error).message);
    }
    try {
      await engine.docker.getImage(machine.image).inspect();
    } catch {
      throw new DropError(`The image ${machine.image} is not on the engine at ${engine.endpoint} (Corral never pulls images: pull or build it there first)`);
    }
    return;
  }
  const addr = serverAddress({ serial: machine.serial, adb_port: machine.adb_port });
  try {
    pickDevice(await listDevices(createServerClient(addr), addr, AbortSignal.timeout(10_000)), machine.serial, addr);
  } catch (err) {
    throw new DropError((err as Error).message);
  }
}
