// An endpoint's input while its room is being found (or entered on another instance): kept in order,
// passed on once before anything later, and bounded.
import { describe, expect, it } from 'vitest';
import { PendingInlet, type Inlet } from '../../src/calls/media/inlet.js';
import { SIGNAL_BUFFER_CAP_BYTES } from '../../src/calls/media/protocol.js';

/** An inlet that records what reaches it, in order. */
function recorder() {
  const got: string[] = [];
  const inlet: Inlet = { audio: (pcm) => got.push(`audio:${pcm.length}`), signal: (text) => got.push(`signal:${text}`) };
  return { got, inlet };
}

describe('PendingInlet', () => {
  it('passes what waited on once, in order, before what comes after', () => {
    const pending = new PendingInlet();
    pending.signal('{"type":"state"}');
    pending.audio(Buffer.alloc(960));
    pending.signal('{"type":"offer"}');
    const { got, inlet } = recorder();
    pending.settle(inlet);
    pending.signal('{"type":"candidate"}');
    expect(got).toEqual(['signal:{"type":"state"}', 'audio:960', 'signal:{"type":"offer"}', 'signal:{"type":"candidate"}']);
  });

  it('keeps at most 2 s of audio and what a stuck signalling peer may hold', () => {
    const pending = new PendingInlet();
    for (let i = 0; i < 101; i++) pending.audio(Buffer.alloc(960)); // 100 frames are 2 s at 24 kHz
    const frame = 'x'.repeat(64 * 1024);
    const fit = Math.floor(SIGNAL_BUFFER_CAP_BYTES / frame.length);
    for (let i = 0; i <= fit; i++) pending.signal(frame);
    const { got, inlet } = recorder();
    pending.settle(inlet);
    expect(got.filter((item) => item.startsWith('audio:'))).toHaveLength(100);
    expect(got.filter((item) => item.startsWith('signal:'))).toHaveLength(fit);
  });
});
