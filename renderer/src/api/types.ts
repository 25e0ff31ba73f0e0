import type { CorralApi } from '../../../main/api/ui/contract';

export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'unauthorised' | 'refused';

/** The API plus what the UI needs to know about the line it runs over. */
export interface Transport {
  kind: 'ipc' | 'ws';
  api: CorralApi;
  /** Calls `listener` on every (re)connection, after streams are running again. */
  onOpen(listener: () => void): () => void;
}
