// Cuts a stream of PCM16 pushes (any length) into fixed-size frames, holding less than one frame.

export const SAMPLE_RATE = 24_000;
/** The translation endpoint consumes 200 ms engine frames: 24,000 Hz x 2 bytes x 0.2 s. */
export const FRAME_BYTES = 9_600;
export const FRAME_MS = 200;

export class FrameBatcher {
  private parts: Buffer[] = [];
  private length = 0;

  constructor(private readonly frameBytes: number = FRAME_BYTES) {}

  /** Bytes waiting for a full frame (always less than one frame). */
  get pendingBytes(): number {
    return this.length;
  }

  /** Adds audio; returns the whole frames now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    if (!chunk.length) return [];
    this.parts.push(chunk);
    this.length += chunk.length;
    if (this.length < this.frameBytes) return [];
    const all = Buffer.concat(this.parts, this.length);
    const frames: Buffer[] = [];
    let offset = 0;
    while (all.length - offset >= this.frameBytes) {
      frames.push(all.subarray(offset, offset + this.frameBytes));
      offset += this.frameBytes;
    }
    const rest = all.subarray(offset);
    // Copy the remainder so the large concatenation can be released.
    this.parts = rest.length ? [Buffer.from(rest)] : [];
    this.length = rest.length;
    return frames;
  }

  /** Takes the incomplete remainder (possibly empty), leaving the batcher empty. */
  drain(): Buffer {
    const rest = Buffer.concat(this.parts, this.length);
    this.parts = [];
    this.length = 0;
    return rest;
  }
}
