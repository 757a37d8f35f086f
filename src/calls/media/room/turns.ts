// Turns of speech in a side's voice, found by voice activity: the energy of each 20 ms window of the
// mixed PCM16 (24 kHz). A turn starts with a voiced window and ends once its speaker has been silent
// for HANGOVER_MS, counted in audio (silence the client sends) or, when the client sends nothing at
// all, on the room's clock. Its length is counted in samples, so the same audio always gives the same
// length however late the network delivered it.
import { BYTES_PER_SAMPLE, SAMPLE_RATE } from '../protocol.js';

const WINDOW_SAMPLES = SAMPLE_RATE / 50;
/**
 * Every 8th sample of a window is enough to tell speech from silence (voices carry their energy below
 * 1.5 kHz); reading all of them took about 15 % of a core at 100 test-mode calls (bench:media).
 */
const STRIDE = 8;
/** A window whose RMS is above this (about -36 dBFS) is speech; below it, breath and line noise. */
const VOICED_RMS = 500;
const HANGOVER_MS = 500;
const EMPTY = Buffer.alloc(0);
const HANGOVER_SAMPLES = (SAMPLE_RATE * HANGOVER_MS) / 1000;

export interface SpeechTurn {
  /** When its first voiced window arrived (the room's clock). */
  startedAt: number;
  /** startedAt plus its length: from its first voiced window to the end of its last one. */
  endedAt: number;
  /** Its length in milliseconds, from the samples. */
  durationMs: number;
}

export class SpeechTurns {
  private carry = EMPTY;
  private startedAt: number | null = null;
  /** Samples since the turn's first voiced window, and up to the end of its last voiced one. */
  private samples = 0;
  private voicedSamples = 0;
  private lastAudioAt = 0;

  constructor(
    private readonly onTurn: (turn: SpeechTurn) => void,
    /** Each voiced window, when it arrived. */
    private readonly onVoiced: (now: number) => void = () => {},
  ) {}

  /** Whether a turn is in progress. */
  get speaking(): boolean {
    return this.startedAt !== null;
  }

  /** When the turn in progress started; null between turns. */
  get turnStartedAt(): number | null {
    return this.startedAt;
  }

  push(pcm: Buffer, now: number): void {
    this.lastAudioAt = now;
    const data = this.carry.length ? Buffer.concat([this.carry, pcm]) : pcm;
    const windowBytes = WINDOW_SAMPLES * BYTES_PER_SAMPLE;
    let offset = 0;
    for (; offset + windowBytes <= data.length; offset += windowBytes) this.window(data, offset, now);
    this.carry = offset < data.length ? Buffer.from(data.subarray(offset)) : EMPTY;
  }

  /** The room's clock: a speaker who stopped sending audio altogether has finished the turn. */
  tick(now: number): void {
    if (this.startedAt !== null && now - this.lastAudioAt >= HANGOVER_MS) this.finish();
  }

  /** Ends the turn in progress now (the speaker left, the call ended). */
  flush(): void {
    this.carry = EMPTY;
    if (this.startedAt !== null) this.finish();
  }

  private window(data: Buffer, offset: number, now: number): void {
    let energy = 0;
    // Each sample read from its two bytes here: readInt16LE's checks made this loop four times slower.
    for (let at = offset, end = offset + WINDOW_SAMPLES * BYTES_PER_SAMPLE; at < end; at += STRIDE * BYTES_PER_SAMPLE) {
      const sample = ((data[at + 1]! << 24) | (data[at]! << 16)) >> 16;
      energy += sample * sample;
    }
    const voiced = Math.sqrt(energy / (WINDOW_SAMPLES / STRIDE)) > VOICED_RMS;
    if (this.startedAt === null) {
      if (!voiced) return;
      this.startedAt = now;
      this.samples = 0;
    }
    this.samples += WINDOW_SAMPLES;
    if (voiced) {
      this.voicedSamples = this.samples;
      this.onVoiced(now);
    }
    else if (this.samples - this.voicedSamples >= HANGOVER_SAMPLES) this.finish();
  }

  private finish(): void {
    const startedAt = this.startedAt!;
    const durationMs = Math.round((this.voicedSamples * 1000) / SAMPLE_RATE);
    this.startedAt = null;
    this.samples = 0;
    this.voicedSamples = 0;
    this.onTurn({ startedAt, endedAt: startedAt + durationMs, durationMs });
  }
}
