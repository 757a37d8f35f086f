// The call page's WebRTC signalling, where the call's room is: what one side's signalling peer sends
// (offer, answer, ICE candidates, the page's own state) goes to the other side's peers of the same
// call, and each side is told whether the other has one open. A peer is a socket of this instance or
// (several instances) one relayed here from the instance it reached, so a call's peers always meet in
// one place. The transport checked each frame against the kinds a page may send and wrote it anew;
// here it goes out only inside a `peer_signal` envelope, so no page can say what the server says.
import type { Side } from '../side.js';
import { otherSide } from '../side.js';
import type { SignalPeer } from './endpoints.js';
import type { PeerFrame } from './protocol.js';

export class SignalRelay {
  /** Signalling peers by call. */
  private readonly calls = new Map<string, Set<SignalPeer>>();

  /**
   * A peer joins its call's signalling until it is gone: it learns whether the other side is there,
   * the other side that it is. Returns what the peer's frames are passed to.
   */
  join(peer: SignalPeer): (text: string) => void {
    if (peer.isGone) return () => {};
    let peers = this.calls.get(peer.callId);
    if (!peers) this.calls.set(peer.callId, (peers = new Set()));
    const firstOfSide = this.count(peers, peer.side) === 0;
    peers.add(peer);
    peer.whenGone(() => this.remove(peer));
    peer.signal(presence(this.count(peers, otherSide(peer.side)) > 0));
    if (firstOfSide) this.tell(peers, otherSide(peer.side), presence(true));
    return (text) => this.relay(peer, text);
  }

  private remove(peer: SignalPeer): void {
    const peers = this.calls.get(peer.callId);
    if (!peers?.delete(peer)) return;
    if (!peers.size) this.calls.delete(peer.callId);
    else if (this.count(peers, peer.side) === 0) this.tell(peers, otherSide(peer.side), presence(false));
  }

  /** Passes a checked frame from `from` to the other side's peers, in its envelope. */
  private relay(from: SignalPeer, text: string): void {
    const peers = this.calls.get(from.callId);
    if (peers?.has(from)) this.tell(peers, otherSide(from.side), peerSignal(text));
  }

  private count(peers: Set<SignalPeer>, side: Side): number {
    let count = 0;
    for (const peer of peers) if (peer.side === side && !peer.isGone) count++;
    return count;
  }

  private tell(peers: Set<SignalPeer>, side: Side, text: string): void {
    for (const peer of peers) if (peer.side === side) peer.signal(text);
  }
}

const presence = (present: boolean) => JSON.stringify({ type: 'peer', present } satisfies PeerFrame);

/**
 * The `peer_signal` envelope (protocol.ts) around a checked frame's JSON text: one object the transport
 * wrote, so the envelope is made without parsing the SDP a second time.
 */
const peerSignal = (checked: string) => `{"type":"peer_signal","signal":${checked}}`;
