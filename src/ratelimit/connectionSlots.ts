// Counts the long-lived connections each holder has open (an API key's event streams, a chat
// session's customer streams, a call side's media sockets) and refuses one beyond the holder's limit.
// Counts are per process: with several instances each enforces the limit for what it holds.

/** Gives the slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

export class ConnectionSlots {
  private readonly held = new Map<string, number>();

  /** A slot for `holder`, or null when it already holds `limit` connections. */
  take(holder: string, limit: number): ReleaseSlot | null {
    const count = this.held.get(holder) ?? 0;
    if (count >= limit) return null;
    this.held.set(holder, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(holder) ?? 1) - 1;
      if (left > 0) this.held.set(holder, left);
      else this.held.delete(holder);
    };
  }

  /** Connections open for `holder`, or for every holder together. */
  count(holder?: string): number {
    if (holder !== undefined) return this.held.get(holder) ?? 0;
    let total = 0;
    for (const count of this.held.values()) total += count;
    return total;
  }
}
