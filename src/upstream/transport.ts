// The connection a ReconnectingSocket drives: what it uses of a `ws` WebSocket (tests pass a fake).

import { WebSocket, type RawData } from 'ws';

export interface UpstreamTransport {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | Buffer, callback?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
}

export type OpenTransport = (url: string, options: { headers: Record<string, string>; handshakeTimeout: number }) => UpstreamTransport;

/** The default: a `ws` WebSocket without compression. */
export const openWebSocket: OpenTransport = (url, options) =>
  new WebSocket(url, { headers: options.headers, handshakeTimeout: options.handshakeTimeout, perMessageDeflate: false });

/** A frame's payload as one Buffer, whatever form `ws` delivered it in. */
export function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Runs socket teardown whose errors are irrelevant (the socket is being dropped anyway). */
export function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored on purpose
  }
}
