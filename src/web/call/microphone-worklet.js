// AudioWorklet: the microphone at the context's rate -> 24 kHz mono PCM16 frames of 20 ms for the
// stream socket, with each frame's level (for the "speaking" indicator). Downsampling averages the
// input samples that fall into each output sample's interval (a box low-pass), so speech does not alias.
const OUT_RATE = 24000;
const FRAME_SAMPLES = 480; // 20 ms at 24 kHz

class MicrophoneTo24k extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE; // input samples per output sample
    this.position = 0; // input samples into the current output sample
    this.sum = 0;
    this.count = 0;
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.energy = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || !channels.length) return true;
    const input = channels[0];
    for (let i = 0; i < input.length; i++) {
      // Mono: the first channel (a microphone is mono; stereo devices carry the same voice twice).
      this.sum += input[i];
      this.count++;
      this.position += 1;
      if (this.position >= this.step) {
        this.position -= this.step;
        this.emit(this.sum / this.count);
        this.sum = 0;
        this.count = 0;
      }
    }
    return true;
  }

  emit(value) {
    const clamped = Math.max(-1, Math.min(1, value));
    this.frame[this.filled++] = clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff;
    this.energy += clamped * clamped;
    if (this.filled < FRAME_SAMPLES) return;
    const pcm = this.frame.buffer;
    this.port.postMessage({ pcm, level: Math.sqrt(this.energy / FRAME_SAMPLES) }, [pcm]);
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.energy = 0;
  }
}

registerProcessor('microphone-to-24k', MicrophoneTo24k);
