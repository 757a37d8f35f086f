// A scripted Twilio Media Streams client: plays Twilio's side of `<Connect><Stream>` byte for byte
// (connected, start with customParameters and mediaFormat, 20 ms mu-law media with chunk and
// timestamp, marks echoed as played, stop) and records what the server sends.
import { WebSocket } from 'ws';
import { Arrivals, whenClosed, type Closed, type Frame } from './support.js';

export const FRAME_BYTES = 160;

export class TwilioClient {
  readonly received: Frame[] = [];
  readonly closed: Promise<Closed>;
  readonly streamSid = `MZ${Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32)}`;
  readonly callSid = `CA${Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32)}`;
  private sequence = 0;
  private chunk = 0;
  /** Echo marks at once, as a phone that plays everything immediately does. */
  echoMarks = true;

  private readonly arrivals: Arrivals;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      this.received.push(frame);
      if (frame.event === 'mark' && this.echoMarks) this.send({ event: 'mark', streamSid: this.streamSid, mark: frame.mark });
    });
    // After the handler above: a wait asks once the message is recorded.
    this.arrivals = new Arrivals(ws);
    this.closed = whenClosed(ws);
  }

  static open(url: string): Promise<TwilioClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new TwilioClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body || '{}') })));
      });
      ws.once('error', reject);
    });
  }

  send(message: object): void {
    this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(++this.sequence) }));
  }

  /** `connected` then `start`, as Twilio opens a stream. */
  start(customParameters: Record<string, string>): void {
    this.ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    this.send({
      event: 'start',
      streamSid: this.streamSid,
      start: {
        streamSid: this.streamSid,
        accountSid: 'AC00000000000000000000000000000000',
        callSid: this.callSid,
        tracks: ['inbound'],
        customParameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  }

  /** Sends mu-law audio as Twilio does: 160-byte (20 ms) media messages. */
  media(mulaw: Buffer): void {
    for (let offset = 0; offset < mulaw.length; offset += FRAME_BYTES) {
      this.chunk++;
      this.send({
        event: 'media',
        streamSid: this.streamSid,
        media: { track: 'inbound', chunk: String(this.chunk), timestamp: String((this.chunk - 1) * 20), payload: mulaw.subarray(offset, offset + FRAME_BYTES).toString('base64') },
      });
    }
  }

  stop(): void {
    this.send({ event: 'stop', streamSid: this.streamSid, stop: { accountSid: 'AC00000000000000000000000000000000', callSid: this.callSid } });
  }

  /** The media payloads received, decoded, in order. */
  audio(): Buffer {
    return Buffer.concat(this.received.filter((f) => f.event === 'media').map((f) => Buffer.from(f.media.payload, 'base64')));
  }

  waitForAudio(bytes: number): Promise<Buffer> {
    return this.arrivals.waitFor(() => (this.audio().length >= bytes ? this.audio() : undefined), `${bytes} bytes of phone audio`);
  }

  waitFor(match: (frame: Frame) => boolean): Promise<Frame> {
    return this.arrivals.waitFor(() => this.received.find(match), 'a message from the server');
  }
}
