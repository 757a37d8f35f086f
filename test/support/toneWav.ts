// The fake microphone's sound in the browser tests (test/support/sharedChromium.ts), and a voice message's.

/**
 * A mono 16-bit PCM WAV of a gliding tone with a tremolo, its last `silentSeconds` silent: the fake microphone
 * (which repeats it) then speaks in turns, so test mode's voice activity ends each and makes a placeholder caption.
 */
export function toneWav(seconds: number, silentSeconds = 0, sampleRate = 48_000): Buffer {
  const samples = seconds * sampleRate;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  let phase = 0;
  for (let i = 0; i < samples; i++) {
    const t = i / sampleRate;
    phase += (2 * Math.PI * (300 + 200 * Math.sin(2 * Math.PI * 0.5 * t))) / sampleRate;
    const level = 0.35 + 0.25 * Math.sin(2 * Math.PI * 3 * t);
    wav.writeInt16LE(t < seconds - silentSeconds ? Math.round(Math.sin(phase) * level * 32767) : 0, 44 + i * 2);
  }
  return wav;
}
