import type { UiEvent } from '../../../main/api/ui/contract';

/** Binary searches over ascending arrays (event indexes, seqs). */

/** Index of the last element ≤ x in an ascending array, or -1. */
export function lastAtOrBefore(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Index of the event with this seq in an ascending, gapless-or-not list, or -1. */
export function indexOfSeq(events: readonly UiEvent[], seq: number): number {
  let lo = 0;
  let hi = events.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = events[mid]!.seq;
    if (s === seq) return mid;
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Index of the last event with seq ≤ `seq` (-1 when none). */
export function indexAtOrBefore(events: readonly UiEvent[], seq: number): number {
  let lo = 0;
  let hi = events.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.seq <= seq) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
