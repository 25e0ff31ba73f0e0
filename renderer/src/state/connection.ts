import { create } from 'zustand';
import type { ConnectionStatus } from '../api/transport';

/** The state of the line to the host (always 'open' in the desktop app). */
export const useConnection = create<{ status: ConnectionStatus }>(() => ({ status: 'connecting' }));

export function setConnectionStatus(status: ConnectionStatus): void {
  useConnection.setState({ status });
}
