import { useState, type FormEvent, type KeyboardEvent } from 'react';
import type { CorralApi, UiEvent } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';

interface Props {
  api: CorralApi;
  sessionId: string;
  /** The session's status: the interrupt button is live while a turn runs. */
  status?: string;
  onSent(event: UiEvent): void;
  onInterrupt(): Promise<unknown>;
}

/**
 * A box to send the session a user message (Enter sends; Shift+Enter is a new line), and the
 * interrupt button (also Escape) that stops the running turn with a `user.interrupt`.
 */
export function Composer({ api, sessionId, status, onSent, onInterrupt }: Props) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);

  const send = async () => {
    if (!text.trim() || sending) return;
    const sent = text;
    setSending(true);
    setError(null);
    try {
      onSent(await api.sendMessage({ sessionId, text: sent }));
      // The box stays editable while the call waits (say, for the connection to come back):
      // clear only what was sent, never what was typed meanwhile.
      setText((now) => (now === sent ? '' : now.startsWith(sent) ? now.slice(sent.length).replace(/^\n+/, '') : now));
    } catch (err) {
      setError(toClientError(err));
    } finally {
      setSending(false);
    }
  };
  const running = status === 'running' || status === 'rescheduling';
  const [stopping, setStopping] = useState(false);
  const stop = async () => {
    setStopping(true);
    setError(null);
    try {
      await onInterrupt();
    } catch (err) {
      setError(toClientError(err));
    } finally {
      setStopping(false);
    }
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void send();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  return (
    <form className="composer" onSubmit={onSubmit} data-testid="composer">
      {error && <ErrorNote error={error} />}
      <div className="composer-row">
        <textarea
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKeyDown}
          placeholder="Message the agent…"
          rows={2}
          aria-label="Message"
          data-testid="message-input"
        />
        <button type="submit" disabled={sending || !text.trim()} data-testid="send-button">
          {sending ? 'Sending…' : 'Send'}
        </button>
        <button type="button" className="danger" onClick={() => void stop()} disabled={!running || stopping} data-testid="interrupt-button" title="Interrupt the running turn (Esc)" aria-keyshortcuts="Escape">
          {stopping ? 'Stopping…' : 'Interrupt'}
        </button>
      </div>
    </form>
  );
}
