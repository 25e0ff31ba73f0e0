import { create } from 'zustand';
import type { Kind } from '../lib/session-index';

/** Which panel the right-hand side shows. */
export type PanelTab = 'state' | 'event' | 'slice';

/** Filters shared by the list, the lanes and the scrubber. */
export interface Filters {
  /** Kinds hidden from the list (empty: all shown). */
  hidden: readonly Kind[];
  /** Only events of this hand (tool calls on it and its hand.* events). */
  hand: string | null;
  failedOnly: boolean;
  /** Turn headers and rows of collapsed turns. */
  collapsed: readonly number[];
  /** Text the rows must contain (our own search: the browser's cannot see virtualised rows). */
  text: string;
}

/**
 * The one focus every pane of a session follows: the cursor (an event's seq; null follows the
 * newest), the selected slice, playback, the filters and the open panel. Lives outside React
 * so canvases redraw from it without re-rendering components.
 */
export interface ViewState {
  cursor: number | null;
  /** A range of seqs (inclusive), from a shift-click or the slice fields. */
  slice: { from: number; to: number } | null;
  playing: boolean;
  speed: 1 | 4 | 16;
  filters: Filters;
  tab: PanelTab;
  /** The event the inspector shows. */
  inspect: number | null;
  /** The overview strip's window (seqs, inclusive); null: the whole log. */
  zoom: { from: number; to: number } | null;
}

const initial: ViewState = {
  cursor: null,
  slice: null,
  playing: false,
  speed: 4,
  filters: { hidden: [], hand: null, failedOnly: false, collapsed: [], text: '' },
  tab: 'state',
  inspect: null,
  zoom: null,
};

export const useView = create<ViewState>(() => initial);

/** Starts a session's view afresh, at a position when the URL names one. */
export function resetView(at: number | null, slice: ViewState['slice'] = null): void {
  useView.setState({ ...initial, cursor: at, slice, tab: slice ? 'slice' : 'state' });
}

export const setCursor = (cursor: number | null) => useView.setState({ cursor });
export const setSlice = (slice: ViewState['slice']) => useView.setState(slice ? { slice, tab: 'slice' } : { slice });
export const setFilters = (f: Partial<Filters>) => useView.setState((s) => ({ filters: { ...s.filters, ...f } }));
export const setTab = (tab: PanelTab) => useView.setState({ tab });
export const inspect = (seq: number | null) => useView.setState(seq === null ? { inspect: null } : { inspect: seq, cursor: seq, tab: 'event' });
