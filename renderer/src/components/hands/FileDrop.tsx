import { useEffect, useRef, useState } from 'react';
import type { CorralApi } from '../../../../main/api/ui/contract';
import { takeFiles } from '../../lib/hand-drops';

const hasFiles = (e: DragEvent) => Boolean(e.dataTransfer?.types.includes('Files'));

/**
 * Files dropped anywhere on the window (an overlay shows only while files are dragged) and a
 * file picker as the keyboard's way in. Both send the file to the host, which decides what it is.
 */
export function FileDrop({ api }: { api: CorralApi }) {
  const [dragging, setDragging] = useState(false);
  const depth = useRef(0);
  const picker = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth.current += 1;
      setDragging(true);
    };
    const leave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setDragging(false);
    };
    const over = (e: DragEvent) => {
      if (hasFiles(e)) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth.current = 0;
      setDragging(false);
      void takeFiles(api, [...(e.dataTransfer?.files ?? [])]);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragleave', leave);
    window.addEventListener('dragover', over);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('dragover', over);
      window.removeEventListener('drop', drop);
    };
  }, [api]);
  return (
    <>
      <button type="button" onClick={() => picker.current?.click()}>
        Add a key or ssh config…
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        data-testid="file-picker"
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          e.target.value = '';
          void takeFiles(api, files);
        }}
      />
      {dragging && (
        <div className="drop-overlay" data-testid="drop-overlay">
          Drop an SSH private key or an ssh config to attach its hosts
        </div>
      )}
    </>
  );
}
