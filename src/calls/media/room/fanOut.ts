// What one side hears, going out to every sink of that side: raw PCM to phone-like sinks, WAV chunks
// (wrapped once, whatever the number of listeners) to WebSocket listeners, text frames to those that
// take them.
import { WavChunker } from '../audio/pcm.js';
import type { MediaSink } from '../endpoints.js';
import { CHUNK_BYTES, type TextFrame } from '../protocol.js';

/**
 * One stream of audio into a side (an echo, an interpretation, a pass-through). Audio leaves at once:
 * raw to PCM sinks, and as WAV chunks of at most 100 ms (each stream keeps its own chunker, so a stray
 * odd byte never mixes two streams).
 */
export class AudioOut {
  private chunker: WavChunker | null = null;

  constructor(private readonly fanOut: SideFanOut) {}

  push(pcm: Buffer): void {
    const { pcmSinks, wavSinks } = this.fanOut;
    for (const sink of pcmSinks) sink.audio(pcm);
    if (!wavSinks.size) return;
    this.chunker ??= new WavChunker((chunk) => {
      for (const sink of this.fanOut.wavSinks) sink.audio(chunk);
    }, CHUNK_BYTES);
    this.chunker.push(pcm);
  }

  /** A new turn of this stream begins: sinks that queue audio drop what is left of the earlier one. */
  turnStarted(): void {
    for (const sink of this.fanOut.sinks) sink.turnStarted?.();
  }
}

export class SideFanOut {
  readonly pcmSinks = new Set<MediaSink>();
  readonly wavSinks = new Set<MediaSink>();

  get sinks(): Iterable<MediaSink> {
    return [...this.pcmSinks, ...this.wavSinks];
  }

  get size(): number {
    return this.pcmSinks.size + this.wavSinks.size;
  }

  add(sink: MediaSink): void {
    (sink.format === 'pcm' ? this.pcmSinks : this.wavSinks).add(sink);
  }

  remove(sink: MediaSink): void {
    this.pcmSinks.delete(sink);
    this.wavSinks.delete(sink);
  }

  /** A new stream of audio into this side. */
  stream(): AudioOut {
    return new AudioOut(this);
  }

  text(frame: TextFrame): void {
    for (const sink of this.wavSinks) sink.text?.(frame);
  }
}
