// Clients that misbehave on purpose at the TCP level: reset a connection right after (or while)
// sending, stop half-way, send garbage. Each resolves once its socket has closed, whoever closed it.
import net from 'node:net';

export type Ending =
  /** RST at once, as a client that crashed or a load balancer that gave up. */
  | { reset: number }
  /** RST once the first bytes of an answer arrived. */
  | { resetAfterAnswer: true }
  /** FIN after sending: the server sees the end of a request that never completed. */
  | { finish: true }
  /** Nothing more: the connection stays open until the server closes it. */
  | { hold: true };

export interface HostileResult {
  /** What the server sent before the connection closed. */
  received: Buffer;
}

/** Connects, sends `parts` (each written in its own packet), then ends the connection as told. */
export function misbehave(port: number, parts: Array<string | Buffer>, ending: Ending): Promise<HostileResult> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('error', () => {});
    socket.on('data', (data) => {
      received.push(data);
      if ('resetAfterAnswer' in ending && !socket.destroyed) socket.resetAndDestroy();
    });
    socket.once('close', () => resolve({ received: Buffer.concat(received) }));
    socket.once('connect', () => {
      for (const part of parts) socket.write(part);
      if ('reset' in ending) {
        if (ending.reset === 0) socket.resetAndDestroy();
        else setTimeout(() => socket.resetAndDestroy(), ending.reset);
      } else if ('finish' in ending) socket.end();
    });
  });
}

/** Deterministic bytes for garbage (a seeded generator, so a failure can be replayed). */
export function garbage(seed: number, length: number): Buffer {
  let state = seed >>> 0 || 1;
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

/** An HTTP/1.1 request head (and optional body) as raw text. */
export function rawRequest(method: string, path: string, headers: Record<string, string | number>, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** The headers of curl --http2 over http:// (an h2c upgrade), plus `extra`. */
export const h2cUpgrade = (extra: Record<string, string | number> = {}) => ({
  Connection: 'Upgrade, HTTP2-Settings',
  Upgrade: 'h2c',
  'HTTP2-Settings': 'AAMAAABkAAQCAAAAAAIAAAAA',
  ...extra,
});

/** A WebSocket handshake's headers, plus `extra`. */
export const webSocketUpgrade = (extra: Record<string, string | number> = {}) => ({
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': 13,
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  ...extra,
});
