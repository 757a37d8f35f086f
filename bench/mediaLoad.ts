// A load generator of bench/media.ts and bench/cluster.ts, run as child processes (the targets split between them) so their
// CPU does not count as the server's and no one client's event loop adds its own queueing: opens a stream and a listen socket per side, streams 20 ms frames in real time, and
// measures how long each frame takes from entering a stream socket to leaving the listen socket.
//
// Every frame (960 bytes = 480 samples of 24 kHz PCM16) carries in its first bytes: a magic number,
// the stream index, a sequence number and the send time (performance.now()), so the receiver can
// match it whatever chunking the server does.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export interface Target {
  stream: string;
  listen: string;
  /**
   * This socket opens in the second wave (`connect-later`), the other in the first: with several
   * instances, the first wave's sockets make the rooms where they land, and the later ones, once those
   * are settled, land elsewhere and are relayed to them.
   */
  later?: 'stream' | 'listen';
}

/** What a load process measured, sent once the drain after the measured window is over. */
export interface LoadResult {
  sent: number;
  received: number;
  lost: number;
  badFrames: number;
  outOfOrder: number;
  lateSends: number;
  clientLoopDelayP99: number;
  phoneFramesSent: number;
  phoneFramesReceived: number;
  phoneMarks: number;
  /** Milliseconds from sending each measured frame to hearing it, raw, so percentiles cover every process. */
  latencies: number[];
}

/** A side played by a phone over Twilio Media Streams: the stream URL and the `token` start parameter. */
export interface PhoneTarget {
  url: string;
  token: string;
}

type Command =
  | { cmd: 'connect'; targets: Target[]; phones?: PhoneTarget[]; wav: boolean }
  | { cmd: 'connect-later' }
  | { cmd: 'stream'; warmupMs: number; measureMs: number; drainMs: number }
  | { cmd: 'disconnect' };

const FRAME_BYTES = 960;
const FRAME_MS = 20;
const MAGIC = 0x6d656469; // "medi"
const WAV_HEADER_BYTES = 44;

interface Stream {
  index: number;
  ws: WebSocket;
  seq: number;
  nextDue: number;
  sentInWindow: number;
  firstMeasuredSeq: number;
  lastMeasuredSeq: number;
}

interface Ear {
  ws: WebSocket;
  carry: Buffer;
}

interface Phone {
  ws: WebSocket;
  streamSid: string;
  nextDue: number;
  chunk: number;
}

const streams: Stream[] = [];
const ears: Ear[] = [];
const phones: Phone[] = [];
/** 20 ms media messages sent by phones, and received by them (their echo in test mode), while measuring. */
let phoneFramesSent = 0;
let phoneFramesReceived = 0;
let phoneMarks = 0;
let wav = true;
let assigned: Target[] = [];
let measuring = false;
const latencies: number[] = [];
const received = new Map<number, Set<number>>();
let badFrames = 0;
let outOfOrder = 0;
const lastSeq = new Map<number, number>();

const send = (message: unknown) => process.send!(message);

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode} for ${url}`)));
  });
}

// A quiet tone after the header, as a voice would be (computed once).
const TONE = Buffer.alloc(FRAME_BYTES);
for (let i = 0; i < FRAME_BYTES / 2; i++) TONE.writeInt16LE(Math.round(800 * Math.sin(i / 9)), i * 2);

function frame(stream: Stream): Buffer {
  const buf = Buffer.allocUnsafe(FRAME_BYTES);
  TONE.copy(buf);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(stream.index, 4);
  buf.writeUInt32LE(stream.seq, 8);
  buf.writeDoubleLE(performance.now(), 12);
  return buf;
}

function onFrame(data: Buffer, now: number): void {
  if (data.readUInt32LE(0) !== MAGIC) {
    badFrames++;
    return;
  }
  const index = data.readUInt32LE(4);
  const seq = data.readUInt32LE(8);
  const sentAt = data.readDoubleLE(12);
  const previous = lastSeq.get(index);
  if (previous !== undefined && seq <= previous) outOfOrder++;
  lastSeq.set(index, seq);
  const stream = streams[index];
  if (seq < stream.firstMeasuredSeq || seq > stream.lastMeasuredSeq) return;
  received.get(index)!.add(seq);
  latencies.push(now - sentAt);
}

function onListen(ear: Ear, data: Buffer): void {
  const now = performance.now();
  if (!wav) {
    if (data.length === FRAME_BYTES) onFrame(data, now);
    else badFrames++;
    return;
  }
  // WAV chunk: frames may straddle chunks; reassemble the byte stream per listener.
  const pcm = data.subarray(WAV_HEADER_BYTES);
  let bytes = ear.carry.length ? Buffer.concat([ear.carry, pcm]) : pcm;
  while (bytes.length >= FRAME_BYTES) {
    onFrame(bytes.subarray(0, FRAME_BYTES), now);
    bytes = bytes.subarray(FRAME_BYTES);
  }
  ear.carry = Buffer.from(bytes);
}

// 20 ms of the same quiet tone as 8 kHz mu-law (G.711 of 800 * sin: a few values, encoded once).
const PHONE_FRAME = Buffer.alloc(160, 0xff).toString('base64');

async function connectPhone(target: PhoneTarget, index: number): Promise<void> {
  const ws = await open(target.url);
  const phone: Phone = { ws, streamSid: `MZbench${index}`, nextDue: 0, chunk: 0 };
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString());
    if (message.event === 'media') {
      if (measuring) phoneFramesReceived++;
    } else if (message.event === 'mark') {
      phoneMarks++;
      ws.send(JSON.stringify({ event: 'mark', streamSid: phone.streamSid, mark: message.mark }));
    }
  });
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  ws.send(
    JSON.stringify({
      event: 'start',
      streamSid: phone.streamSid,
      start: {
        streamSid: phone.streamSid,
        callSid: `CAbench${index}`,
        tracks: ['inbound'],
        customParameters: { token: target.token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    }),
  );
  phones.push(phone);
}

function sendPhoneFrame(phone: Phone): void {
  phone.chunk++;
  phone.ws.send(
    JSON.stringify({
      event: 'media',
      streamSid: phone.streamSid,
      media: { track: 'inbound', chunk: String(phone.chunk), timestamp: String(phone.chunk * FRAME_MS), payload: PHONE_FRAME },
    }),
  );
}

/** Opens the targets' sockets of one wave: the listen socket before the stream socket of a target. */
async function connectAll(targets: Target[], wave: 'first' | 'later'): Promise<void> {
  const inWave = (target: Target, socket: 'stream' | 'listen') => (target.later === socket) === (wave === 'later');
  const batch = 50;
  for (let i = 0; i < targets.length; i += batch) {
    await Promise.all(
      targets.slice(i, i + batch).map(async (target, j) => {
        const index = i + j;
        if (inWave(target, 'listen')) {
          const ear: Ear = { ws: await open(target.listen), carry: Buffer.alloc(0) };
          ear.ws.on('message', (data: Buffer, isBinary) => {
            if (isBinary) onListen(ear, data);
          });
          ears.push(ear);
        }
        if (inWave(target, 'stream')) {
          const ws = await open(target.stream);
          streams[index] = { index, ws, seq: 0, nextDue: 0, sentInWindow: 0, firstMeasuredSeq: Infinity, lastMeasuredSeq: -1 };
          received.set(index, new Set());
        }
      }),
    );
  }
}

async function run(warmupMs: number, measureMs: number, drainMs: number): Promise<void> {
  const start = performance.now();
  // Spread the sides over the 20 ms period, as independent callers would be.
  for (const stream of streams) stream.nextDue = start + Math.random() * FRAME_MS;
  for (const phone of phones) phone.nextDue = start + Math.random() * FRAME_MS;
  const measureFrom = start + warmupMs;
  const measureTo = measureFrom + measureMs;
  let announced = false;
  let cpu = { usage: process.cpuUsage(), at: performance.now() };
  let lateSends = 0;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now();
      if (!announced && now >= measureFrom) {
        announced = true;
        measuring = true;
        cpu = { usage: process.cpuUsage(), at: now };
        loop.enable();
        send({ event: 'measure-start' });
      }
      if (now >= measureTo) {
        clearInterval(timer);
        measuring = false;
        loop.disable();
        const usage = process.cpuUsage(cpu.usage);
        send({ event: 'measure-end', clientCpu: (usage.user + usage.system) / 1_000 / (now - cpu.at) });
        resolve();
        return;
      }
      for (const stream of streams) {
        while (stream.nextDue <= now) {
          if (now - stream.nextDue > FRAME_MS) lateSends++;
          if (measuring) {
            stream.firstMeasuredSeq = Math.min(stream.firstMeasuredSeq, stream.seq);
            stream.lastMeasuredSeq = stream.seq;
            stream.sentInWindow++;
          }
          stream.ws.send(frame(stream));
          stream.seq++;
          stream.nextDue += FRAME_MS;
        }
      }
      for (const phone of phones) {
        while (phone.nextDue <= now) {
          if (measuring) phoneFramesSent++;
          sendPhoneFrame(phone);
          phone.nextDue += FRAME_MS;
        }
      }
    }, 1);
  });
  await new Promise((resolve) => setTimeout(resolve, drainMs));
  const sent = streams.reduce((n, s) => n + s.sentInWindow, 0);
  const got = [...received.values()].reduce((n, set) => n + set.size, 0);
  const result: LoadResult = {
    sent,
    received: got,
    lost: sent - got,
    badFrames,
    outOfOrder,
    lateSends,
    clientLoopDelayP99: loop.percentile(99) / 1e6,
    phoneFramesSent,
    phoneFramesReceived,
    phoneMarks,
    latencies,
  };
  send({ event: 'results', ...result });
}

process.on('message', (message: Command) => {
  void (async () => {
    try {
      if (message.cmd === 'connect') {
        wav = message.wav;
        assigned = message.targets;
        await connectAll(assigned, 'first');
        for (const [index, phone] of (message.phones ?? []).entries()) await connectPhone(phone, index);
        send({ event: 'connected' });
      } else if (message.cmd === 'connect-later') {
        await connectAll(assigned, 'later');
        send({ event: 'connected' });
      } else if (message.cmd === 'stream') {
        await run(message.warmupMs, message.measureMs, message.drainMs);
      } else if (message.cmd === 'disconnect') {
        for (const s of streams) s.ws.close();
        for (const e of ears) e.ws.close();
        for (const p of phones) p.ws.close();
        await new Promise((resolve) => setTimeout(resolve, 500));
        send({ event: 'disconnected' });
        process.exit(0);
      }
    } catch (err) {
      send({ event: 'error', message: (err as Error).message });
      process.exit(1);
    }
  })();
});
