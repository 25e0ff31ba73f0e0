import { useHotkeys } from 'react-hotkeys-hook';
import type { UiEvent } from '../../../../main/api/ui/contract';
import { indexAtOrBefore, type SessionIndex } from '../../lib/session-index';
import { useView } from '../../state/view';

/**
 * Keys of a session: ←/→ step the cursor, `,`/`.` jump to the previous/next event of the same
 * kind, Home/End go to the first event and back to live, Space plays or pauses (but presses a focused button), Escape (also
 * in the message box) interrupts a running turn, `?` shows the sheet. None fires while a dialog is open.
 */
export function useSessionHotkeys(events: readonly UiEvent[], index: SessionIndex, interrupt: () => void, status: string | undefined, onHelp: () => void): void {
  const at = () => {
    const c = useView.getState().cursor;
    return c === null ? index.count - 1 : indexAtOrBefore(events, c);
  };
  const go = (i: number) => {
    const e = events[Math.max(0, Math.min(index.count - 1, i))];
    if (e) useView.setState({ cursor: e.seq, playing: false });
  };
  const noDialog = () => !document.querySelector('dialog[open]');
  const opts = { enabled: noDialog, preventDefault: true };
  useHotkeys('left', () => go(at() - 1), opts, [events]);
  useHotkeys('right', () => go(at() + 1), opts, [events]);
  useHotkeys('comma', () => go(index.sameKind(at(), -1)), opts, [events]);
  useHotkeys('period', () => go(index.sameKind(at(), 1)), opts, [events]);
  useHotkeys('home', () => go(0), opts, [events]);
  useHotkeys('end', () => useView.setState({ cursor: null, playing: false }), opts, [events]);
  // Space on a focused button (or tab, link, summary) presses it, as everywhere: it is not playback.
  useHotkeys('space', () => useView.setState((s) => ({ playing: !s.playing, ...(s.cursor === null ? { cursor: events[0]?.seq ?? null } : {}) })), { ...opts, ignoreEventWhen: onControl }, [events]);
  useHotkeys('?', onHelp, { ...opts, useKey: true }, [onHelp]);
  useHotkeys(
    'escape',
    () => {
      if (status === 'running' || status === 'rescheduling') interrupt();
    },
    { enabled: noDialog, enableOnFormTags: true },
    [status, interrupt],
  );
}

/** Whether a key went to a control that Space activates (a button, tab, link, summary…). */
function onControl(e: KeyboardEvent): boolean {
  const t = e.target;
  return t instanceof Element && t.closest('button, a[href], summary, [role="button"], [role="tab"], [role="menuitem"], [role="switch"], [role="checkbox"], [role="radio"]') !== null;
}
