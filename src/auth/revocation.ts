// "This credential no longer works": announced once its revocation has committed, heard by every open
// stream and socket acting under it, so revocation ends them at once instead of at their next request.
// Credentials are named by id (an API key's `key_...`; later an OAuth connection's). One interface, so
// an implementation over Redis pub/sub can carry announcements to every instance.

export interface RevocationBus {
  /** Tells every watcher of `credentialId` that it is revoked. Call after the revocation committed; never throws. */
  announce(credentialId: string): void;
  /** Calls `onRevoked` once when `credentialId` is announced; returns the function that stops watching. */
  watch(credentialId: string, onRevoked: () => void): () => void;
}

export class LocalRevocationBus implements RevocationBus {
  private readonly watchers = new Map<string, Set<() => void>>();

  /** `onWatcherError` hears a watcher that threw: the revocation has committed, the others still end. */
  constructor(private readonly onWatcherError: (err: unknown) => void) {}

  announce(credentialId: string): void {
    const watching = this.watchers.get(credentialId);
    if (!watching) return;
    this.watchers.delete(credentialId);
    for (const onRevoked of watching) {
      try {
        onRevoked();
      } catch (err) {
        this.onWatcherError(err);
      }
    }
  }

  watch(credentialId: string, onRevoked: () => void): () => void {
    let watching = this.watchers.get(credentialId);
    if (!watching) this.watchers.set(credentialId, (watching = new Set()));
    const watcher = () => onRevoked();
    watching.add(watcher);
    return () => {
      const current = this.watchers.get(credentialId);
      if (!current?.delete(watcher)) return;
      if (!current.size) this.watchers.delete(credentialId);
    };
  }

  /** How many watchers are waiting (tests check that ended streams stopped watching). */
  watcherCount(): number {
    let count = 0;
    for (const watching of this.watchers.values()) count += watching.size;
    return count;
  }
}
