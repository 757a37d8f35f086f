// Turns of speech by voice activity (src/calls/media/room/turns.ts): lengths counted in samples, ends by
// silence in the audio or by the clock when the audio stops.
import { describe, expect, it } from 'vitest';
import { SpeechTurns, type SpeechTurn } from '../../src/calls/media/room/turns.js';

const tone = (ms: number, amplitude = 8_000) => {
  const samples = (24_000 * ms) / 1000;
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 24_000)), i * 2);
  return out;
};
const silence = (ms: number) => Buffer.alloc((24_000 * ms * 2) / 1000);

describe('speech turns', () => {
  it('a turn ends after 500 ms of silence in the audio; its length is the voiced span, however the audio was cut', () => {
    const turns: SpeechTurn[] = [];
    const detector = new SpeechTurns((turn) => turns.push(turn));
    const audio = Buffer.concat([silence(200), tone(1_200), silence(300), tone(300), silence(600)]);
    // Odd pieces: windows span pushes.
    for (let offset = 0; offset < audio.length; offset += 1_234) detector.push(audio.subarray(offset, offset + 1_234), 1_000);
    expect(turns).toEqual([{ startedAt: 1_000, endedAt: 2_800, durationMs: 1_800 }]);
    expect(detector.speaking).toBe(false);
  });

  it('quiet noise is no speech; a speaker who stops sending ends the turn on the clock; flush ends it at once', () => {
    const turns: SpeechTurn[] = [];
    const detector = new SpeechTurns((turn) => turns.push(turn));
    detector.push(tone(1_000, 300), 0);
    expect(detector.speaking).toBe(false);
    detector.push(tone(400), 10);
    detector.tick(400);
    expect(turns).toEqual([]);
    detector.tick(510);
    expect(turns).toEqual([{ startedAt: 10, endedAt: 410, durationMs: 400 }]);
    detector.push(tone(100), 600);
    detector.flush();
    expect(turns.at(-1)).toEqual({ startedAt: 600, endedAt: 700, durationMs: 100 });
  });
});
