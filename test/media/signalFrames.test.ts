// What a call page may send on its signalling socket: its own kinds only, each key known and of its
// type, strings bounded; anything else is refused with 1008 and the reason for its type.
import { describe, expect, it } from 'vitest';
import { CLOSE, SIGNAL_MAX_CANDIDATE_CHARS, SIGNAL_MAX_FRAME_BYTES, SIGNAL_MAX_ID_CHARS, SIGNAL_MAX_SDP_CHARS, SIGNAL_REFUSED } from '../../src/calls/media/protocol.js';
import { checkSignalFrame } from '../../src/calls/media/transports/websocket/signalling.js';

const check = (frame: unknown) => checkSignalFrame(Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame)), false);
const host = 'candidate:842163049 1 udp 1677729535 192.0.2.7 50153 typ srflx raddr 0.0.0.0 rport 0 generation 0';

describe('a call page signalling frame', () => {
  it('passes offers, answers, candidates and state, written anew with only their keys', () => {
    const good = [
      { type: 'offer', sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n' },
      { type: 'answer', sdp: 'x'.repeat(SIGNAL_MAX_SDP_CHARS) },
      { type: 'candidate', candidate: { candidate: host, sdpMid: '0', sdpMLineIndex: 0, usernameFragment: 'aB3d' } },
      { type: 'candidate', candidate: { candidate: '', sdpMid: null, sdpMLineIndex: null, usernameFragment: null } },
      { type: 'candidate', candidate: { candidate: host } },
      { type: 'candidate', candidate: {} },
      { type: 'candidate', candidate: null },
      { type: 'state', muted: false, camera: true, speaking: true },
    ];
    for (const frame of good) expect(check(frame)).toEqual({ relay: JSON.stringify(frame) });
    // Spacing goes; a repeated key is written once, as JSON.parse read it (the last one).
    expect(check('{ "type" : "offer", "sdp": "a", "sdp": "v=0" }')).toEqual({ relay: '{"type":"offer","sdp":"v=0"}' });
  });

  it("refuses the server's own frames and anything not a page's kind (1008)", () => {
    const notPeer = [
      { type: 'caption', id: 'cap_1', final: true, original: 'I confirm the refund of 5,000 EUR to this caller', translated: 'x', language: 'en', source_language: 'fi' },
      { type: 'peer', present: false },
      { type: 'peer_signal', signal: { type: 'offer', sdp: 'v=0' } },
      { type: 'ice_servers', ice_servers: [{ urls: 'turn:evil.example.org', username: 'u', credential: 'p' }] },
      { type: 'notice', code: 'call_ended', message: 'the call has ended' },
      { type: 'provenance', engine: 'test', model: 'echo' },
      { type: 'OFFER', sdp: 'v=0' },
      { sdp: 'v=0' },
      [{ type: 'offer', sdp: 'v=0' }],
      'null',
      '"offer"',
      'not json',
    ];
    for (const frame of notPeer) expect(check(frame), JSON.stringify(frame)).toEqual({ refused: SIGNAL_REFUSED.notPeerSignal });
  });

  it('refuses a key more or less, a value of another type, or a string too long, naming the shape of its type', () => {
    const bad: Array<[unknown, keyof typeof SIGNAL_REFUSED]> = [
      [{ type: 'offer', sdp: 'v=0', caption: 'I confirm the refund' }, 'offer'],
      [{ type: 'offer' }, 'offer'],
      [{ type: 'offer', sdp: '' }, 'offer'],
      [{ type: 'offer', sdp: 'x'.repeat(SIGNAL_MAX_SDP_CHARS + 1) }, 'offer'],
      [{ type: 'answer', sdp: { text: 'v=0' } }, 'answer'],
      [{ type: 'candidate' }, 'candidate'],
      [{ type: 'candidate', candidate: host }, 'candidate'],
      [{ type: 'candidate', candidate: { candidate: host, note: 'x' } }, 'candidate'],
      [{ type: 'candidate', candidate: { candidate: 'x'.repeat(SIGNAL_MAX_CANDIDATE_CHARS + 1) } }, 'candidate'],
      [{ type: 'candidate', candidate: { sdpMid: 'x'.repeat(SIGNAL_MAX_ID_CHARS + 1) } }, 'candidate'],
      [{ type: 'candidate', candidate: { usernameFragment: 7 } }, 'candidate'],
      [{ type: 'candidate', candidate: { sdpMLineIndex: -1 } }, 'candidate'],
      [{ type: 'candidate', candidate: { sdpMLineIndex: 0.5 } }, 'candidate'],
      [{ type: 'candidate', candidate: { sdpMLineIndex: 65_536 } }, 'candidate'],
      [{ type: 'candidate', candidate: { sdpMLineIndex: '0' } }, 'candidate'],
      [{ type: 'state', muted: false, camera: true }, 'state'],
      [{ type: 'state', muted: 'no', camera: true, speaking: false }, 'state'],
      [{ type: 'state', muted: false, camera: true, speaking: false, text: 'Alice: I confirm the refund' }, 'state'],
      ['{"type":"state","muted":false,"camera":true,"speaking":false,"__proto__":{"x":1}}', 'state'],
    ];
    for (const [frame, type] of bad) expect(check(frame), JSON.stringify(frame)).toEqual({ refused: SIGNAL_REFUSED[type] });
  });

  it('refuses binary (1003) and oversized (1009) frames before reading them', () => {
    expect(checkSignalFrame(Buffer.from('{"type":"state"}'), true)).toEqual({ refused: CLOSE.signalBinary });
    expect(check({ type: 'offer', sdp: 'x'.repeat(SIGNAL_MAX_FRAME_BYTES) })).toEqual({ refused: CLOSE.signalTooBig });
  });

  it('gives reasons that fit a close frame (123 bytes) and say no more than the rule', () => {
    for (const { code, reason } of Object.values(SIGNAL_REFUSED)) {
      expect(code).toBe(1008);
      expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    }
  });
});
