import type { UiEvent } from '../../../main/api/ui/contract';
import type { Filters } from '../state/view';
import type { SessionIndex } from './session-index';
import { summarise } from './summary';
import { lastAtOrBefore } from './search';

/**
 * The rows of the timeline: a header per turn, then its events, less what the filters hide.
 * `index[r]` is the event index a row shows (a header: its turn's first event), so a position
 * maps to its row by binary search. Appends extend the rows; a filter change rebuilds them.
 */
export class RowModel {
  index: number[] = [];
  header: boolean[] = [];
  private built = 0;
  private lastHeaderTurn = 0;
  private filters: Filters | null = null;

  /** Brings the rows up to date; returns true when they changed. */
  sync(events: readonly UiEvent[], idx: SessionIndex, filters: Filters): boolean {
    if (filters !== this.filters) {
      this.filters = filters;
      this.index = [];
      this.header = [];
      this.built = 0;
      this.lastHeaderTurn = 0;
    }
    if (this.built >= idx.count) return false;
    const f = filters;
    const hidden = new Set(f.hidden);
    const collapsed = new Set(f.collapsed);
    const text = f.text.trim().toLowerCase();
    for (let i = this.built; i < idx.count; i++) {
      const e = events[i]!;
      const turn = idx.turnOf[i]!;
      if (hidden.has(idx.kinds[i]!)) continue;
      if (f.failedOnly && idx.kinds[i] !== 'failed' && idx.kinds[i] !== 'error') continue;
      if (f.hand !== null && handOf(e) !== f.hand) continue;
      if (text && !matches(e, text)) continue;
      if (turn >= 1 && turn > this.lastHeaderTurn) {
        this.index.push(idx.turnStarts[turn - 1]!);
        this.header.push(true);
        this.lastHeaderTurn = turn;
      }
      if (collapsed.has(turn)) continue;
      this.index.push(i);
      this.header.push(false);
    }
    this.built = idx.count;
    return true;
  }

  get count(): number {
    return this.index.length;
  }

  /** The row showing event `i` (or the nearest row before it). */
  rowOf(i: number): number {
    let r = lastAtOrBefore(this.index, i);
    // A header and its turn's first event share an index: prefer the event's row.
    if (r >= 0 && this.header[r] && this.index[r + 1] === i) r++;
    return Math.max(0, r);
  }
}

/** The hand an event concerns, if any. */
export function handOf(e: UiEvent): string | null {
  if (typeof e.hand === 'string') return e.hand;
  if (e.type === 'agent.tool_use' && e.server_block) return null; // run by the model provider
  if (e.type === 'agent.tool_use') return typeof (e.input as { hand?: unknown } | undefined)?.hand === 'string' ? String((e.input as { hand: string }).hand) : 'main';
  const d = e.details as { hand?: unknown } | undefined;
  return typeof d?.hand === 'string' ? d.hand : null;
}

function matches(e: UiEvent, text: string): boolean {
  if (e.type.includes(text)) return true;
  return summarise(e).text.toLowerCase().includes(text);
}
