// What a telephone leg hears, paced: audio is queued as it comes and handed out one fixed-size frame
// per frame interval of wall time, as a phone plays it. AudioSocket lines (8 kHz slin16) and Twilio
// media streams (8 kHz mu-law) pace the same way and differ only in frame size and silence byte.

export interface PacedFramesOptions {
  frameBytes: number;
  frameMs: number;
  /** Beyond this the oldest whole frames are dropped: a phone never lags far behind. */
  maxQueuedBytes: number;
  /** How long a last partial frame waits for more audio before it leaves padded with silence. */
  tailWaitMs: number;
  /** The byte that pads a partial frame (0 for linear PCM, 0xff for mu-law). */
  silence: number;
}

export class PacedFrames {
  private queue: Buffer = Buffer.alloc(0);
  private nextSendAt = 0;
  private lastPushAt = 0;
  /** Frames dropped: the oldest beyond the queue limit, and those the sender could not take. */
  framesDropped = 0;

  constructor(private readonly options: PacedFramesOptions) {}

  get queuedBytes(): number {
    return this.queue.length;
  }

  /** Queues audio; beyond the limit the oldest whole frames go, keeping the newest. */
  push(audio: Buffer, now: number): void {
    if (!audio.length) return;
    const { frameBytes, maxQueuedBytes } = this.options;
    this.lastPushAt = now;
    let queue = this.queue.length ? Buffer.concat([this.queue, audio]) : audio;
    if (queue.length > maxQueuedBytes) {
      const drop = Math.ceil((queue.length - maxQueuedBytes) / frameBytes) * frameBytes;
      this.framesDropped += drop / frameBytes;
      queue = queue.subarray(Math.min(drop, queue.length));
    }
    this.queue = queue;
  }

  /** Forgets what is queued (it is stale). */
  clear(): void {
    this.queue = Buffer.alloc(0);
  }

  /**
   * Hands `send` every frame due by `now`: whole frames, and a last partial one padded with silence
   * once no audio came for the tail wait. `send` answers false when it could not take the frame
   * (its connection is backed up): the frame counts as dropped and the pace goes on.
   */
  due(now: number, send: (frame: Buffer) => boolean): void {
    if (!this.queue.length) return;
    const { frameBytes, frameMs, tailWaitMs, silence } = this.options;
    // Idle, or the timer fell behind: restart the clock rather than send a burst.
    if (this.nextSendAt < now - 3 * frameMs) this.nextSendAt = now;
    while (this.queue.length && this.nextSendAt <= now) {
      let frame: Buffer;
      if (this.queue.length >= frameBytes) {
        frame = this.queue.subarray(0, frameBytes);
        this.queue = this.queue.subarray(frameBytes);
      } else {
        if (now - this.lastPushAt < tailWaitMs) return;
        frame = Buffer.alloc(frameBytes, silence);
        this.queue.copy(frame);
        this.queue = Buffer.alloc(0);
      }
      this.nextSendAt += frameMs;
      if (!send(frame)) this.framesDropped++;
    }
  }
}
