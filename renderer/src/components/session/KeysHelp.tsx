import { useEffect, useRef } from 'react';

const KEYS: [string, string][] = [
  ['← / →', 'previous / next event'],
  ['↑ / ↓ (in the list)', 'previous / next event'],
  [', / .', 'previous / next event of the same kind'],
  ['Home / End', 'first event / back to live'],
  ['Space', 'play / pause'],
  ['Shift + click', 'select a slice from the cursor'],
  ['Shift + drag on the strip', 'select a slice'],
  ['Enter (in the list)', 'inspect the event'],
  ['Escape', 'interrupt the running turn'],
  ['?', 'this sheet'],
];

/** The keyboard sheet (`?`). */
export function KeysHelp({ onClose }: { onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => ref.current?.showModal(), []);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="keys-title" onClose={onClose}>
      <h2 id="keys-title">Keys</h2>
      <table className="keys">
        <tbody>
          {KEYS.map(([k, what]) => (
            <tr key={k}>
              <th scope="row">
                <kbd>{k}</kbd>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="dialog-actions">
        <button type="button" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
