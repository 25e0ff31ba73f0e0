import { newId } from '../db/ids';
import type { LoggedEvent } from '../session/types';
import type { BrainEventInput } from './brain-event-schema';
import { fitToLog } from './fit-event';

/** Appends events for a brain (the harness's emit: through the host, folded into its view). */
type Emit = (events: BrainEventInput[], key: string) => Promise<LoggedEvent[]>;

/**
 * Logs the blocks of one model reply as each completes (`blk:<request>:<index>`), in order.
 *
 * A call to a hand is not waited for: its event id is chosen here, so the end of the request and
 * the call itself can follow it in the same message to the host, which handles a brain's
 * messages in order (the append, then the end, then the call). Waiting for each append's reply
 * cost a round trip to the host between the model's last byte and the tool's dispatch. Other
 * blocks (text, thinking, MCP, custom and server tools) are appended and waited for as before:
 * a server block is paired with the calls logged before it.
 */
export class BlockAppends {
  /** The reply's events, in order; a call sent but not yet answered is its input with its id. */
  readonly logged: LoggedEvent[] = [];
  private readonly pending: Promise<unknown>[] = [];

  constructor(
    private readonly emit: Emit,
    /**
     * The request's span: its id names the blocks' keys; its append, sent before them, is not
     * waited for (the host handles a brain's messages in order), only checked by `settled`.
     */
    private readonly start: { id: string; logged: Promise<LoggedEvent> },
    /** Calls this brain logged itself (their outcome is known to it). */
    private readonly loggedHere: Set<string>,
    /** Called just before a call's append is sent without waiting for its reply. */
    private readonly beforeUnawaited?: () => void,
  ) {}

  async add(input: BrainEventInput, index: number): Promise<void> {
    const key = `blk:${this.start.id}:${index}`;
    const fitted = input.type === 'agent.tool_use' && !input.server_block ? fitToLog(input) : [];
    if (fitted.length === 1) {
      const event = { ...fitted[0], id: newId.event() } as BrainEventInput & { id: string };
      const at = this.logged.length;
      this.logged.push({ ...event, seq: 0, processed_at: '' } as LoggedEvent);
      this.loggedHere.add(event.id);
      this.beforeUnawaited?.();
      const sent = this.emit([event], key).then(([e]) => {
        this.logged[at] = e!;
      });
      sent.catch(() => {}); // settled() reports it
      this.pending.push(sent);
      return;
    }
    const [e] = await this.emit([input], key);
    if ((e!.type === 'agent.tool_use' && !e!.server_block) || e!.type === 'agent.mcp_tool_use') this.loggedHere.add(e!.id);
    this.logged.push(e!);
  }

  /** Resolves once every append sent so far is answered; rejects with the first that failed. */
  async settled(): Promise<void> {
    await this.start.logged;
    await Promise.all(this.pending);
  }
}
