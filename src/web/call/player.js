// Plays the listen socket's WAV chunks (24 kHz mono PCM16) back to back with no gaps: each chunk is
// scheduled to start exactly where the previous one ends. A small jitter buffer (JITTER_MS ahead of
// the clock) absorbs uneven arrival; after an underrun playback restarts that far ahead, with a short
// fade-in so the restart does not click. The delay held is reported (shown on the page).
const JITTER_MS = 80;
/** Beyond this much queued audio (a burst after a stall) the oldest is skipped to keep the delay low. */
const MAX_QUEUED_MS = 240;
const FADE_SAMPLES = 48; // 2 ms at 24 kHz
const WAV_HEADER_BYTES = 44;
const RATE = 24000;

export class ChunkPlayer {
  constructor(context, destination) {
    this.context = context;
    this.destination = destination || context.destination;
    this.output = context.createGain();
    this.output.connect(this.destination);
    this.nextAt = 0;
    this.chunksPlayed = 0;
    this.samplesPlayed = 0;
    this.level = 0;
  }

  /** One WAV chunk (ArrayBuffer) from the listen socket. Returns false for something that is not one. */
  play(wav) {
    if (!(wav instanceof ArrayBuffer) || wav.byteLength <= WAV_HEADER_BYTES) return false;
    const samples = new Int16Array(wav.slice(WAV_HEADER_BYTES, wav.byteLength - ((wav.byteLength - WAV_HEADER_BYTES) % 2)));
    const buffer = this.context.createBuffer(1, samples.length, RATE);
    const channel = buffer.getChannelData(0);
    let energy = 0;
    for (let i = 0; i < samples.length; i++) {
      channel[i] = samples[i] / 0x8000;
      energy += channel[i] * channel[i];
    }
    this.level = Math.sqrt(energy / Math.max(1, samples.length));
    const now = this.context.currentTime;
    const jitter = JITTER_MS / 1000;
    if (this.nextAt < now + 0.005) {
      // Underrun (or the first chunk): start a little ahead, faded in.
      this.nextAt = now + jitter;
      const fade = Math.min(FADE_SAMPLES, channel.length);
      for (let i = 0; i < fade; i++) channel[i] *= i / fade;
    } else if (this.nextAt - now > MAX_QUEUED_MS / 1000) {
      return true; // too far behind: this chunk is dropped and the delay shrinks back
    }
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    source.start(this.nextAt);
    source.onended = () => source.disconnect();
    this.nextAt += buffer.duration;
    this.chunksPlayed++;
    this.samplesPlayed += samples.length;
    return true;
  }

  /** Milliseconds of audio queued ahead of what is heard now (the delay the page adds). */
  get delayMs() {
    return Math.max(0, Math.round((this.nextAt - this.context.currentTime) * 1000));
  }

  /** Forget what is queued (the other side's language changed: the old interpretation is stale). */
  reset() {
    this.output.disconnect();
    this.output = this.context.createGain();
    this.output.connect(this.destination);
    this.nextAt = 0;
  }
}
