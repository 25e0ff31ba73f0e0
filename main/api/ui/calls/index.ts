import type { Host } from '../../../host';
import type { HostCalls } from '../service';
import { catalogCalls } from './catalog';
import { asUiCall } from './errors';
import { forkCalls } from './fork';
import { readFullOutput } from './full-output';
import { modelRequestAt } from './model-request';
import { handsOf, sessionCalls } from './sessions';
import { vaultCalls } from './vaults';
import { machineCalls } from './machines';
import { workerKeyCalls } from './worker-keys';

/**
 * Every host call of the contract (agents, environments, new sessions, events, hands, forks,
 * model requests, kept outputs), each run through `asUiCall` so the shared HTTP logic's
 * refusals reach the window as its error kinds. Inputs arrive validated by the UI service.
 */
export function hostCalls(host: Host): HostCalls & { handsOf(sessionId: string): ReturnType<typeof handsOf> } {
  const raw: HostCalls = {
    ...catalogCalls(host),
    ...sessionCalls(host),
    ...forkCalls(host),
    ...vaultCalls(host),
    ...machineCalls(host),
    ...workerKeyCalls(host),
    getModelRequest: ({ sessionId, atSeq }) => modelRequestAt(host, sessionId, atSeq),
    readFullOutput: ({ sessionId, seq, offset, length }) => readFullOutput(host.log, host.dataDir, sessionId, seq, offset, length),
  };
  const wrapped = Object.fromEntries(Object.entries(raw).map(([name, fn]) => [name, (input: unknown) => asUiCall(() => (fn as (i: unknown) => unknown)(input))]));
  return { ...(wrapped as unknown as HostCalls), handsOf: (id) => handsOf(host, id) };
}
