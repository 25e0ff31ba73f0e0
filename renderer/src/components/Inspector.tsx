import type { UiEvent } from '../../../main/api/ui/contract';

/** The selected event in full (as JSON text, never as markup). */
export function Inspector({ event, onClose }: { event: UiEvent; onClose(): void }) {
  return (
    <section className="inspector" data-testid="inspector" aria-label={`Event ${event.seq}`}>
      <header>
        <span>
          #{event.seq} <strong>{event.type}</strong>
        </span>
        <button type="button" className="link" onClick={onClose} aria-label="Close the inspector">
          ✕
        </button>
      </header>
      <pre>{JSON.stringify(event, null, 2)}</pre>
    </section>
  );
}
