// "This credential no longer works": announced once its revocation has committed, heard by every open
// stream and socket acting under it (so revocation ends them at once instead of at their next request)
// and by the credential cache (so the very next request looks the credential up again). Credentials are
// named by id (an API key's `key_...`; later an OAuth connection's). One interface: the local bus serves
// one process (PGlite), the PostgreSQL bus (postgresRevocationBus.ts) carries announcements to every
// instance on the database, and a Redis pub/sub bus can take its place later.

/** Whether a credential works now and until when (epoch ms; null: until it is revoked). */
export type CredentialState = { active: false } | { active: true; expiresAt: number | null };

export interface RevocationBus {
  /**
   * Tells every watcher of `credentialId`, in every instance, that it is revoked. Call after the revocation
   * committed; this process's watchers have heard it when the call returns, other instances' are on their
   * way when the promise settles. Never rejects.
   */
  announce(credentialId: string): Promise<void>;
  /** Calls `onRevoked` once when `credentialId` is announced; returns the function that stops watching. */
  watch(credentialId: string, onRevoked: () => void): () => void;
  /** Calls `onAnnounced` with every credential announced from now on; returns the function that stops it. */
  watchAll(onAnnounced: (credentialId: string) => void): () => void;
  /**
   * Whether this process hears every announcement right now. While it does not (the connection that
   * carries other instances' announcements is down), anything learned about credentials may be stale.
   */
  hearing(): boolean;
  /** Calls `onGap` whenever announcements may have been missed (hearing was lost); returns the stop function. */
  watchGaps(onGap: () => void): () => void;
}

/** The watchers of one process, and delivery to them. */
export class LocalRevocationBus implements RevocationBus {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly everyAnnouncement = new Set<(credentialId: string) => void>();
  private readonly gapWatchers = new Set<() => void>();

  /** `onWatcherError` hears a watcher that threw: the revocation has committed, the others still end. */
  constructor(private readonly onWatcherError: (err: unknown) => void) {}

  async announce(credentialId: string): Promise<void> {
    this.deliver(credentialId);
  }

  /** Hands an announcement (made here or heard from another instance) to this process's watchers. */
  deliver(credentialId: string): void {
    for (const onAnnounced of this.everyAnnouncement) this.safely(() => onAnnounced(credentialId));
    const watching = this.watchers.get(credentialId);
    if (!watching) return;
    this.watchers.delete(credentialId);
    for (const onRevoked of watching) this.safely(onRevoked);
  }

  /** Tells the gap watchers that announcements may have been missed. */
  deliverGap(): void {
    for (const onGap of this.gapWatchers) this.safely(onGap);
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

  watchAll(onAnnounced: (credentialId: string) => void): () => void {
    const watcher = (credentialId: string) => onAnnounced(credentialId);
    this.everyAnnouncement.add(watcher);
    return () => this.everyAnnouncement.delete(watcher);
  }

  /** One process: every announcement is made here, so none can be missed. */
  hearing(): boolean {
    return true;
  }

  watchGaps(onGap: () => void): () => void {
    const watcher = () => onGap();
    this.gapWatchers.add(watcher);
    return () => this.gapWatchers.delete(watcher);
  }

  /** How many watchers are waiting (tests check that ended streams stopped watching). */
  watcherCount(): number {
    let count = 0;
    for (const watching of this.watchers.values()) count += watching.size;
    return count;
  }

  private safely(run: () => void): void {
    try {
      run();
    } catch (err) {
      this.onWatcherError(err);
    }
  }
}
