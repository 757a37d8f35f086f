// What an endpoint sends into its call's room, and how it waits while the room is not there yet (being
// located, or, relayed from another instance, being entered on the room's instance).
import { SIGNAL_BUFFER_CAP_BYTES } from './protocol.js';
import type { AudioFeed } from './room/room.js';

/** An endpoint's input: a source's voice (24 kHz PCM16), a signalling peer's frames (checked JSON text). */
export interface Inlet {
  readonly audio: AudioFeed;
  readonly signal: (text: string) => void;
}

const ignored = () => {};
/** The inlet of an endpoint that sends nothing the room takes (a sink). */
export const NO_INLET: Inlet = { audio: ignored, signal: ignored };

/** Audio that waits is kept up to 2 s; beyond that it would only make the side lag behind the call. */
const MAX_WAITING_AUDIO_BYTES = 96_000;

/**
 * An endpoint's input until it is known where it goes: kept in order, then passed on before anything
 * sent later, so nothing is delivered twice or lost meanwhile. Bounded: audio beyond 2 s, and frames
 * beyond what a stuck signalling peer may hold, are dropped.
 */
export class PendingInlet implements Inlet {
  private target: Inlet | null = null;
  private waiting: Array<(target: Inlet) => void> | null = [];
  private audioBytes = 0;
  private signalBytes = 0;

  readonly audio = (pcm: Buffer): void => {
    if (this.target) return this.target.audio(pcm);
    if (!this.waiting || this.audioBytes + pcm.length > MAX_WAITING_AUDIO_BYTES) return;
    this.audioBytes += pcm.length;
    this.waiting.push((target) => target.audio(pcm));
  };

  readonly signal = (text: string): void => {
    if (this.target) return this.target.signal(text);
    const bytes = Buffer.byteLength(text);
    if (!this.waiting || this.signalBytes + bytes > SIGNAL_BUFFER_CAP_BYTES) return;
    this.signalBytes += bytes;
    this.waiting.push((target) => target.signal(text));
  };

  /** Where the input goes from now on, what waited first; null: nowhere (the endpoint did not enter). */
  settle(target: Inlet | null): void {
    const waiting = this.waiting ?? [];
    this.waiting = null;
    this.target = target;
    if (target) for (const deliver of waiting) deliver(target);
  }
}
