import { useEffect } from 'react';
import type { UiEvent } from '../../../../main/api/ui/contract';
import { indexAtOrBefore, type SessionIndex } from '../../lib/session-index';
import { useView } from '../../state/view';

/** Longest pause replayed between two events (ms of session time): idle gaps are skipped. */
const MAX_GAP_MS = 1000;

/**
 * Plays the session back while `playing`: the cursor walks the events at the chosen speed,
 * each gap replayed as it happened (capped, so idle time is skipped). Stops at the last event.
 */
export function usePlayback(events: readonly UiEvent[], index: SessionIndex): void {
  const playing = useView((s) => s.playing);
  useEffect(() => {
    if (!playing) return;
    let frame = 0;
    let last = performance.now();
    let budget = 0;
    const tick = (now: number) => {
      const { cursor, speed, playing: still } = useView.getState();
      if (!still) return;
      budget += (now - last) * speed;
      last = now;
      let i = cursor === null ? 0 : Math.max(0, indexAtOrBefore(events, cursor));
      const start = i;
      while (i + 1 < index.count) {
        const gap = Math.min(MAX_GAP_MS, Math.max(0, index.times[i + 1]! - index.times[i]!));
        if (gap > budget) break;
        budget -= gap;
        i++;
      }
      if (i !== start) useView.setState({ cursor: events[i]!.seq });
      if (i + 1 >= index.count) {
        useView.setState({ playing: false });
        return;
      }
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [playing, events, index]);
}
