/** A tiny keyed pub/sub: listeners are called synchronously, in order, after a commit. */
export class Topic<K, V> {
  private readonly listeners = new Map<K, Set<(value: V) => void>>();

  subscribe(key: K, listener: (value: V) => void): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  publish(key: K, value: V): void {
    const set = this.listeners.get(key);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(value);
      } catch (err) {
        // A failing listener (a closed socket, a UI bug) must not undo or block the append.
        console.error('corral: event listener failed:', err);
      }
    }
  }

  count(key: K): number {
    return this.listeners.get(key)?.size ?? 0;
  }
}
