import { describe, expect, it } from 'vitest';
import { SideMixer } from '../../src/calls/media/audio/mixer.js';

const pcm = (...samples: number[]) => {
  const out = Buffer.alloc(samples.length * 2);
  samples.forEach((value, i) => out.writeInt16LE(value, i * 2));
  return out;
};
const samples = (buf: Buffer) => Array.from({ length: buf.length / 2 }, (_, i) => buf.readInt16LE(i * 2));

function mixer(options?: ConstructorParameters<typeof SideMixer>[1]) {
  const out: Buffer[] = [];
  const mix = new SideMixer((chunk) => out.push(chunk), options);
  return { mix, out, heard: () => samples(Buffer.concat(out)) };
}

describe('SideMixer', () => {
  it('passes a lone source straight through: the same buffer, at once', () => {
    const { mix, out } = mixer();
    mix.add('a', 0);
    const frame = pcm(1, 2, 3);
    mix.push('a', frame, 0);
    expect(out).toHaveLength(1);
    expect(out[0]).toBe(frame);
    expect(mix.heldBytes).toBe(0);
  });

  it('sums two sources sample by sample once both have supplied the samples, clamping to 16 bits', () => {
    const { mix, out, heard } = mixer();
    mix.add('a', 0);
    mix.add('b', 0);
    mix.push('a', pcm(1, 2, 3, 4), 0);
    expect(out).toHaveLength(0); // b has not said anything for this moment yet
    mix.push('b', pcm(10, 20), 5);
    expect(heard()).toEqual([11, 22]);
    mix.push('b', pcm(30, 40, 32_000), 10);
    expect(heard()).toEqual([11, 22, 33, 44]);
    mix.push('a', pcm(32_000, -32_000), 15);
    expect(heard()).toEqual([11, 22, 33, 44, 32_767]);
    mix.push('b', pcm(-32_000), 16);
    expect(heard()).toEqual([11, 22, 33, 44, 32_767, -32_768]);
    expect(mix.heldBytes).toBe(0);
  });

  it('stops waiting for a source that has been quiet for stallMs', () => {
    const { mix, heard } = mixer({ stallMs: 60 });
    mix.add('a', 0);
    mix.add('b', 0);
    mix.push('a', pcm(1, 1), 10);
    mix.push('b', pcm(2, 2), 20);
    expect(heard()).toEqual([3, 3]);
    mix.push('a', pcm(5, 5), 40);
    expect(heard()).toEqual([3, 3]);
    mix.tick(70); // b last spoke at 20: not yet stalled
    expect(heard()).toEqual([3, 3]);
    mix.tick(80);
    expect(heard()).toEqual([3, 3, 5, 5]);
    mix.push('a', pcm(6), 100); // b still quiet: a is heard alone at once
    expect(heard()).toEqual([3, 3, 5, 5, 6]);
  });

  it('never lets a source run more than maxSkewBytes ahead', () => {
    const { mix, heard } = mixer({ stallMs: 1_000, maxSkewBytes: 4 });
    mix.add('a', 0);
    mix.add('b', 0);
    mix.push('a', pcm(1, 2, 3), 0);
    expect(heard()).toEqual([1]); // 6 bytes held, 4 allowed: the first sample leaves alone
    mix.push('b', pcm(10), 1);
    expect(heard()).toEqual([1, 12]);
    expect(mix.heldBytes).toBe(2);
  });

  it('a source that leaves is heard to its end; the others continue alone', () => {
    const { mix, heard } = mixer();
    mix.add('a', 0);
    mix.add('b', 0);
    mix.push('a', pcm(1, 1, 1), 0);
    mix.push('b', pcm(2), 0);
    expect(heard()).toEqual([3]);
    mix.remove('a', 1);
    expect(heard()).toEqual([3, 1, 1]);
    expect(mix.sourceCount).toBe(1);
    mix.push('b', pcm(7), 2);
    expect(heard()).toEqual([3, 1, 1, 7]);
  });

  it('keeps samples whole across odd-length pushes', () => {
    const { mix, heard } = mixer();
    const frame = pcm(258, -3);
    mix.push('a', frame.subarray(0, 1), 0);
    mix.push('a', frame.subarray(1, 3), 0);
    mix.push('a', frame.subarray(3), 0);
    expect(heard()).toEqual([258, -3]);
  });
});
