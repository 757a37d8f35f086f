// Mixes the sources of one side (several browser tabs, a phone line and a headset, ...) into the one
// voice the side's listeners and interpreter get.
//
// One source: its audio passes straight through, untouched and undelayed. Several: they are summed
// sample by sample as every source that is talking has supplied the samples, so each source's audio is
// delayed only until the others' audio for the same moment has come. A source that has sent nothing for
// `stallMs` (paused, muted, gone quiet on the network) stops holding the others back: its gap counts as
// silence. No source runs more than `maxSkewBytes` ahead of the mix, which bounds both the memory held
// and the delay a lagging source can add.

export interface MixerOptions {
  stallMs: number;
  maxSkewBytes: number;
}

export const MIXER_DEFAULTS: MixerOptions = {
  // Three 20 ms frames: network jitter of a live source, not yet a pause.
  stallMs: 60,
  // 100 ms of 24 kHz PCM16.
  maxSkewBytes: 4_800,
};

interface Source {
  parts: Buffer[];
  bytes: number;
  lastPushAt: number;
  /** A stray odd byte, kept until its sample's other half comes. */
  carry: number | null;
}

export class SideMixer {
  private readonly sources = new Map<string, Source>();
  private readonly options: MixerOptions;

  constructor(
    /** The mixed voice, and when (the time of the push or tick that released it). */
    private readonly onMixed: (pcm: Buffer, now: number) => void,
    options: Partial<MixerOptions> = {},
  ) {
    this.options = { ...MIXER_DEFAULTS, ...options };
  }

  get sourceCount(): number {
    return this.sources.size;
  }

  /** Audio held back, waiting for other sources (bytes, all sources). */
  get heldBytes(): number {
    let bytes = 0;
    for (const source of this.sources.values()) bytes += source.bytes;
    return bytes;
  }

  add(key: string, now: number): void {
    if (!this.sources.has(key)) this.sources.set(key, { parts: [], bytes: 0, lastPushAt: now, carry: null });
  }

  /** The source left: what it had sent is mixed with what the others have, then it is forgotten. */
  remove(key: string, now: number): void {
    const source = this.sources.get(key);
    if (!source) return;
    if (source.bytes) this.emit(source.bytes, now);
    this.sources.delete(key);
    this.drain(now);
  }

  push(key: string, pcm: Buffer, now: number): void {
    let source = this.sources.get(key);
    if (!source) {
      this.add(key, now);
      source = this.sources.get(key)!;
    }
    source.lastPushAt = now;
    let audio = pcm;
    if (source.carry !== null) {
      audio = Buffer.concat([Buffer.from([source.carry]), pcm]);
      source.carry = null;
    }
    if (audio.length % 2) {
      source.carry = audio[audio.length - 1];
      audio = audio.subarray(0, audio.length - 1);
    }
    if (!audio.length) return;
    if (this.sources.size === 1 && source.bytes === 0) {
      this.onMixed(audio, now);
      return;
    }
    source.parts.push(audio);
    source.bytes += audio.length;
    this.drain(now);
  }

  /** Periodic: sources that went quiet stop holding back what the others said. */
  tick(now: number): void {
    this.drain(now);
  }

  private drain(now: number): void {
    let talkingMin = Infinity;
    let most = 0;
    for (const source of this.sources.values()) {
      most = Math.max(most, source.bytes);
      if (now - source.lastPushAt < this.options.stallMs) talkingMin = Math.min(talkingMin, source.bytes);
    }
    // Nobody talking: everything held goes out. Otherwise as far as every talking source has reached,
    // and never leave any source more than maxSkewBytes ahead.
    let bytes = talkingMin === Infinity ? most : Math.max(talkingMin, most - this.options.maxSkewBytes);
    bytes -= bytes % 2;
    if (bytes > 0) this.emit(bytes, now);
  }

  /** Mixes the first `bytes` bytes of every source (a source holding less adds silence after its end). */
  private emit(bytes: number, now: number): void {
    const samples = bytes / 2;
    const sum = new Int32Array(samples);
    let contributors = 0;
    let only: Buffer | null = null;
    for (const source of this.sources.values()) {
      if (!source.bytes) continue;
      const taken = this.take(source, bytes);
      contributors++;
      only = taken;
      const count = taken.length >> 1;
      for (let i = 0; i < count; i++) sum[i] += taken.readInt16LE(i * 2);
    }
    if (!contributors) return;
    if (contributors === 1 && only!.length === bytes) {
      this.onMixed(only!, now);
      return;
    }
    const out = Buffer.allocUnsafe(bytes);
    for (let i = 0; i < samples; i++) {
      const value = sum[i];
      out.writeInt16LE(value > 32767 ? 32767 : value < -32768 ? -32768 : value, i * 2);
    }
    this.onMixed(out, now);
  }

  /** Removes up to `bytes` bytes from the front of a source's queue. */
  private take(source: Source, bytes: number): Buffer {
    const want = Math.min(bytes, source.bytes);
    const first = source.parts[0];
    let taken: Buffer;
    if (first.length === want) {
      source.parts.shift();
      taken = first;
    } else if (first.length > want) {
      taken = first.subarray(0, want);
      source.parts[0] = first.subarray(want);
    } else {
      const all = Buffer.concat(source.parts, source.bytes);
      taken = all.subarray(0, want);
      source.parts = want < all.length ? [all.subarray(want)] : [];
    }
    source.bytes -= want;
    return taken;
  }
}
