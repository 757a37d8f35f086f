// API keys looked up in memory instead of the database on every request. Safe because a revocation is
// announced on the revocation bus (every instance hears it) and forgets the key here before the next
// request; the TTL only bounds how long an entry could outlive an announcement that was lost (a NOTIFY
// that failed after its revocation committed). While the bus cannot hear other instances, nothing is
// answered from memory. A lookup that was under way while any revocation was announced is not kept:
// it may have read the key just before the revocation committed.
import { credentialIdOf, type ApiPrincipal } from './principal.js';
import type { RevocationBus } from './revocation.js';

export interface PrincipalCacheOptions {
  /** How long an entry is trusted at most; 0 switches the cache off. */
  ttlMs: number;
  /** Entries kept at most; the least recently used goes first. */
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  principal: ApiPrincipal;
  expiresAt: number;
}

export class PrincipalCache {
  // A Map iterates in insertion order: re-inserting on every hit makes its first key the least recently used.
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every announcement and gap: a lookup begun before one is not kept. */
  private generation = 0;
  private readonly now: () => number;
  private readonly stops: Array<() => void>;

  constructor(
    private readonly revocations: RevocationBus,
    private readonly options: PrincipalCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.stops = [revocations.watchAll((credentialId) => this.forget(credentialId)), revocations.watchGaps(() => this.clear())];
  }

  /**
   * The principal of the key whose hash is `keyHash`: from memory when known and fresh, else from
   * `load` (undefined: no such active key; never kept).
   */
  async principalFor(keyHash: string, load: () => Promise<ApiPrincipal | undefined>): Promise<ApiPrincipal | undefined> {
    if (this.options.ttlMs === 0 || !this.revocations.hearing()) return load();
    const known = this.entries.get(keyHash);
    if (known) {
      this.entries.delete(keyHash);
      if (known.expiresAt > this.now()) {
        this.entries.set(keyHash, known);
        return known.principal;
      }
    }
    const generation = this.generation;
    const principal = await load();
    if (principal && generation === this.generation && this.revocations.hearing()) this.keep(keyHash, principal);
    return principal;
  }

  /** How many keys are kept (tests). */
  size(): number {
    return this.entries.size;
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.clear();
  }

  private keep(keyHash: string, principal: ApiPrincipal): void {
    // Shared by every request of the key from now on: nobody may change it.
    Object.freeze(principal.scopes);
    this.entries.set(keyHash, { principal: Object.freeze(principal), expiresAt: this.now() + this.options.ttlMs });
    while (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  private forget(credentialId: string): void {
    this.generation += 1;
    // Revocations are rare and the cache is bounded: a scan is simpler than a second index.
    for (const [keyHash, entry] of this.entries) if (credentialIdOf(entry.principal) === credentialId) this.entries.delete(keyHash);
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
