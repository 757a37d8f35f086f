// Holds many open event streams (GET /v1/events, server-sent events) for bench/rest.ts, in its own
// process so reading them does not load the process that measures. Driven over IPC:
//   {cmd: 'open', url, key, count} -> {event: 'opened'}   every stream answered 200
//   {cmd: 'count'}                 -> {event: 'count', min, max, total}   events received per stream since opened
//   {cmd: 'close'}                 -> {event: 'closed'}
import http from 'node:http';

const streams: http.ClientRequest[] = [];
/** Events received by each open stream. */
let counts: number[] = [];
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
/** Each event has one "event:" line, always after the line before it (its "id:"). */
const EVENT_LINE = Buffer.from('\nevent:');

function occurrences(bytes: Buffer): number {
  let found = 0;
  for (let at = bytes.indexOf(EVENT_LINE); at !== -1; at = bytes.indexOf(EVENT_LINE, at + EVENT_LINE.length)) found++;
  return found;
}

function open(url: string, key: string): Promise<void> {
  const index = counts.push(0) - 1;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`event stream answered ${res.statusCode}`));
        res.resume();
        return;
      }
      // Counted on the bytes as they come, without decoding them: at a thousand streams this process
      // reads as much as the server writes, on the same cores, and decoding and splitting every chunk
      // into lines cost it more CPU than the server spent delivering.
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        // A line split between two chunks starts in the last bytes of the earlier one.
        const seam = Buffer.concat([tail, chunk.subarray(0, EVENT_LINE.length - 1)]);
        counts[index]! += occurrences(chunk) + occurrences(seam);
        const joined = chunk.length >= EVENT_LINE.length - 1 ? chunk : Buffer.concat([tail, chunk]);
        tail = Buffer.from(joined.subarray(Math.max(0, joined.length - (EVENT_LINE.length - 1))));
      });
      res.on('error', () => undefined);
      resolve();
    });
    req.on('error', (err) => (streams.includes(req) ? undefined : reject(err)));
    streams.push(req);
  });
}

process.on('message', async (message: { cmd: string; url?: string; key?: string; count?: number }) => {
  try {
    if (message.cmd === 'open') {
      // In batches, as clients connecting over a few seconds would, not one burst of a thousand.
      for (let i = 0; i < message.count!; i += 50) {
        await Promise.all(Array.from({ length: Math.min(50, message.count! - i) }, () => open(message.url!, message.key!)));
      }
      process.send!({ event: 'opened' });
    } else if (message.cmd === 'count') {
      process.send!({ event: 'count', min: Math.min(...counts), max: Math.max(...counts), total: counts.reduce((a, b) => a + b, 0) });
    } else if (message.cmd === 'close') {
      for (const req of streams.splice(0)) req.destroy();
      counts = [];
      process.send!({ event: 'closed' });
    }
  } catch (err) {
    process.send!({ event: 'error', message: (err as Error).message });
  }
});
