// The pacing both phone transports share (src/calls/media/audio/pacedFrames.ts), on an injected clock.
import { describe, expect, it } from 'vitest';
import { PacedFrames } from '../../src/calls/media/audio/pacedFrames.js';

const options = { frameBytes: 4, frameMs: 20, maxQueuedBytes: 12, tailWaitMs: 40, silence: 0xff };
const drain = (paced: PacedFrames, now: number, take = true) => {
  const frames: number[][] = [];
  paced.due(now, (frame) => {
    frames.push([...frame]);
    return take;
  });
  return frames;
};

describe('paced frames', () => {
  it('hands out one whole frame per interval of the clock, never a burst after an idle spell', () => {
    const paced = new PacedFrames(options);
    paced.push(Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), 1000);
    expect(drain(paced, 1000)).toEqual([[1, 2, 3, 4]]);
    expect(drain(paced, 1010)).toEqual([]);
    expect(drain(paced, 1020)).toEqual([[5, 6, 7, 8]]);
    paced.push(Buffer.from([9, 9, 9, 9, 8, 8, 8, 8]), 5000);
    expect(drain(paced, 5000)).toEqual([[9, 9, 9, 9]]);
  });

  it('pads a last partial frame with silence once no audio came for the tail wait', () => {
    const paced = new PacedFrames(options);
    paced.push(Buffer.from([1, 2]), 1000);
    expect(drain(paced, 1020)).toEqual([]);
    expect(drain(paced, 1040)).toEqual([[1, 2, 0xff, 0xff]]);
    expect(paced.queuedBytes).toBe(0);
    // The end of speech: nothing follows it, not even an empty frame, however much later the pacer asks.
    expect(drain(paced, 1060)).toEqual([]);
    expect(drain(paced, 60_000)).toEqual([]);
  });

  it('keeps the newest audio beyond the limit and counts what it drops, also frames the sender refuses', () => {
    const paced = new PacedFrames(options);
    paced.push(Buffer.from([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4]), 1000);
    expect(paced.framesDropped).toBe(1);
    expect(drain(paced, 1000, false)).toEqual([[2, 2, 2, 2]]);
    expect(paced.framesDropped).toBe(2);
    paced.clear();
    expect(paced.queuedBytes).toBe(0);
    expect(drain(paced, 2000)).toEqual([]);
  });
});
