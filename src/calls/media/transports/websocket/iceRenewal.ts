// Fresh TURN credentials for the signalling sockets open on this instance. A side's credentials (its
// join answer's `ice_servers`) last TURN_CREDENTIAL_TTL_SECONDS; while its signalling socket is open the
// side is in the call, and it is sent new ones every half of that (`ice_servers` frame), so they never
// run out under it. A socket the call's end, a new link or a hang-up closed gets no more: what it was
// given expires within the TTL.
import type { Config, TurnSettings } from '../../../../config.js';
import { turnRenewalMs } from '../../../iceServers.js';
import { sideIceServers } from '../../../join.js';
import type { SignalPeer } from '../../endpoints.js';
import type { IceServersFrame } from '../../protocol.js';

/** How often the sockets are looked at: a renewal goes out at most this late (the clock is `now`). */
const SWEEP_MS = 1_000;

export class IceServerRenewal {
  /** When each open signalling socket is next sent fresh ICE servers (ms on `now`'s clock). */
  private readonly due = new Map<SignalPeer, number>();
  private readonly everyMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly config: Pick<Config, 'iceServers'> & { turn: TurnSettings },
    /** The server's clock (tests move it). */
    private readonly now: () => number,
  ) {
    this.everyMs = turnRenewalMs(config.turn);
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** A signalling socket opened: it holds the credentials of the join answer it was opened with. */
  watch(peer: SignalPeer): void {
    if (peer.isGone) return;
    this.due.set(peer, this.now() + this.everyMs);
    peer.whenGone(() => this.due.delete(peer));
  }

  private sweep(): void {
    const now = this.now();
    for (const [peer, at] of this.due) {
      if (now < at) continue;
      this.due.set(peer, now + this.everyMs);
      const frame: IceServersFrame = { type: 'ice_servers', ice_servers: sideIceServers(this.config, peer.callId, peer.side, now) };
      peer.signal(JSON.stringify(frame));
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.due.clear();
  }
}
