// The open lines of one phone transport: one pacer sends every line's audio in real time, counters
// cover open and closed lines, and shutdown hangs up what is left within a bounded grace.
import type { Logger } from 'pino';
import type { MediaPlane } from '../../plane.js';
import type { LineHost, PhoneLine } from './line.js';

const PACE_TICK_MS = 10;
/** Shutdown waits this long for hung-up lines to close before it drops them. */
export const CLOSE_GRACE_MS = 2_000;

export interface LineTimeouts {
  firstMessageTimeoutMs: number;
  idleTimeoutMs: number;
}

export class PhoneLines implements LineHost {
  readonly firstMessageTimeoutMs: number;
  readonly idleTimeoutMs: number;
  private readonly open = new Set<PhoneLine>();
  private pacer: NodeJS.Timeout | null = null;
  /** Counters of the lines closed since start (open lines report their own). */
  private readonly ofClosedLines: Record<string, number> = { framesSent: 0, framesDropped: 0 };

  constructor(
    readonly name: string,
    readonly plane: MediaPlane,
    readonly log: Logger,
    timeouts: LineTimeouts,
  ) {
    this.firstMessageTimeoutMs = timeouts.firstMessageTimeoutMs;
    this.idleTimeoutMs = timeouts.idleTimeoutMs;
  }

  add(line: PhoneLine): void {
    this.open.add(line);
    this.pacer ??= setInterval(() => {
      const now = Date.now();
      for (const open of this.open) open.pump(now);
    }, PACE_TICK_MS);
    this.pacer.unref();
  }

  closed(line: PhoneLine): void {
    if (!this.open.delete(line)) return;
    for (const [name, value] of Object.entries(line.counters())) this.ofClosedLines[name] = (this.ofClosedLines[name] ?? 0) + value;
    if (this.pacer && !this.open.size) {
      clearInterval(this.pacer);
      this.pacer = null;
    }
  }

  /** Lines open, joined or not. */
  get size(): number {
    return this.open.size;
  }

  /** Lines in their rooms. */
  get active(): number {
    let active = 0;
    for (const line of this.open) if (line.isActive) active++;
    return active;
  }

  /** The lines' counters summed, closed lines included. */
  counters(): Record<string, number> {
    const sums = { ...this.ofClosedLines };
    for (const line of this.open) {
      for (const [name, value] of Object.entries(line.counters())) sums[name] = (sums[name] ?? 0) + value;
    }
    return sums;
  }

  /** Hangs up every line (shutting down), waits a bounded grace for them to close, drops the rest. */
  async close(): Promise<void> {
    for (const line of this.open) line.end({ by: 'server', reason: 'shutting_down' });
    const deadline = Date.now() + CLOSE_GRACE_MS;
    while (this.open.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20).unref());
    for (const line of this.open) line.destroy();
    if (this.pacer) clearInterval(this.pacer);
    this.pacer = null;
  }
}
