// Holds many open event streams (GET /v1/events, server-sent events) for bench/rest.ts, in its own
// process so reading them does not load the process that measures. Driven over IPC:
//   {cmd: 'open', url, key, count} -> {event: 'opened'}   every stream answered 200
//   {cmd: 'count'}                 -> {event: 'count', min, max, total}   events received per stream since opened
//   {cmd: 'close'}                 -> {event: 'closed'}
//
// At a thousand streams this process reads as much as the server writes, on the same two cores, so
// whatever it spends is taken from the server being measured. Through node:http it spent more CPU
// reading than the server spent writing (per post: ~600 us of user time, a fifth of it garbage
// collection of a buffer per read, and the HTTP parser's chunk events). So it reads raw sockets into
// one reused buffer (net's `onread`: no allocation per read) and counts events on the bytes as they
// come, without parsing HTTP: after the status line, the stream is chunks of whole events (the
// server writes whole events per chunk, so a chunk's framing never splits an event's "event:" line).
import net from 'node:net';

/** Each event has one "event:" line, always after the line before it (its "id:"). */
const EVENT_LINE = Buffer.from('\nevent:');
const SEAM = EVENT_LINE.length - 1;
/** Every socket reads into this buffer; each read is counted before the next one is made. */
const readBuffer = Buffer.allocUnsafe(256 * 1024);
/** The last bytes of a stream's previous read joined with the first of its current one. */
const seamBuffer = Buffer.allocUnsafe(2 * SEAM);

interface OpenStream {
  socket: net.Socket;
  /** Events received since opened. */
  events: number;
  /** The last SEAM bytes read (a line split between two reads starts in them). */
  tail: Buffer;
  tailLength: number;
}

const streams: OpenStream[] = [];

function occurrences(bytes: Buffer, from: number, to: number): number {
  let found = 0;
  for (let at = bytes.indexOf(EVENT_LINE, from); at !== -1 && at + EVENT_LINE.length <= to; at = bytes.indexOf(EVENT_LINE, at + EVENT_LINE.length)) found++;
  return found;
}

/** Counts the events in a read of `length` bytes at the start of readBuffer. */
function counted(stream: OpenStream, length: number): void {
  stream.events += occurrences(readBuffer, 0, length);
  if (stream.tailLength) {
    const head = Math.min(SEAM, length);
    stream.tail.copy(seamBuffer, 0, 0, stream.tailLength);
    readBuffer.copy(seamBuffer, stream.tailLength, 0, head);
    stream.events += occurrences(seamBuffer, 0, stream.tailLength + head);
  }
  const keep = Math.min(SEAM, length);
  readBuffer.copy(stream.tail, 0, length - keep, length);
  stream.tailLength = keep;
}

function open(url: URL, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream: OpenStream = { socket: undefined!, events: 0, tail: Buffer.alloc(SEAM), tailLength: 0 };
    let answered = false;
    stream.socket = net.connect({
      host: url.hostname,
      port: Number(url.port),
      onread: {
        buffer: readBuffer,
        // Answers whether to go on reading.
        callback: (length) => {
          if (answered) {
            counted(stream, length);
            return true;
          }
          // The status line comes in the first read (a few dozen bytes); the headers' text never holds an event line.
          answered = true;
          const status = readBuffer.toString('latin1', 0, Math.min(length, 12));
          if (status !== 'HTTP/1.1 200') {
            stream.socket.destroy();
            reject(new Error(`event stream answered ${readBuffer.toString('latin1', 0, Math.min(length, 200))}`));
            return false;
          }
          counted(stream, length);
          resolve();
          return true;
        },
      },
    });
    stream.socket.on('connect', () => {
      stream.socket.write(
        `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    stream.socket.on('error', (err) => (answered ? undefined : reject(err)));
    streams.push(stream);
  });
}

process.on('message', async (message: { cmd: string; url?: string; key?: string; count?: number }) => {
  try {
    if (message.cmd === 'open') {
      const url = new URL(message.url!);
      // In batches, as clients connecting over a few seconds would, not one burst of a thousand.
      for (let i = 0; i < message.count!; i += 50) {
        await Promise.all(Array.from({ length: Math.min(50, message.count! - i) }, () => open(url, message.key!)));
      }
      process.send!({ event: 'opened' });
    } else if (message.cmd === 'count') {
      const counts = streams.map((s) => s.events);
      process.send!({ event: 'count', min: Math.min(...counts), max: Math.max(...counts), total: counts.reduce((a, b) => a + b, 0) });
    } else if (message.cmd === 'close') {
      for (const stream of streams.splice(0)) stream.socket.destroy();
      process.send!({ event: 'closed' });
    }
  } catch (err) {
    process.send!({ event: 'error', message: (err as Error).message });
  }
});
