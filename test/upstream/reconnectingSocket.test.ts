// The reconnecting upstream socket against a fake transport, on vitest's fake timers: backoff delays,
// the bounded queue, backpressure, failure after N attempts, fatal refusals and the orderly close are
// checked step by step without a network or a wall clock.
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReconnectingSocket } from '../../src/upstream/reconnectingSocket.js';
import type { ReconnectingSocketOptions, UpstreamHandlers, UpstreamStatus } from '../../src/upstream/socketTypes.js';
import type { OpenTransport, UpstreamTransport } from '../../src/upstream/transport.js';

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/** One connection attempt as the socket sees it; the test plays the upstream. */
class FakeTransport extends EventEmitter implements UpstreamTransport {
  readyState = CONNECTING;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  closedWith: { code?: number; reason?: string } | null = null;
  terminated = false;

  constructor(
    readonly url: string,
    readonly headers: Record<string, string>,
  ) {
    super();
  }

  send(data: string | Buffer): void {
    this.sent.push(String(data));
  }

  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
  }

  terminate(): void {
    this.terminated = true;
    this.end(1006);
  }

  // --- the upstream's side ---

  accept(): void {
    this.readyState = OPEN;
    this.emit('open');
  }

  refuse(status: number): void {
    this.emit('unexpected-response', {}, { statusCode: status, resume() {} });
  }

  message(text: string): void {
    this.emit('message', Buffer.from(text), false);
  }

  end(code = 1000, reason = ''): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', code, Buffer.from(reason));
  }
}

interface Harness {
  socket: ReconnectingSocket;
  transports: FakeTransport[];
  statuses: UpstreamStatus[];
  received: string[];
  logs: Array<{ level: string; message: string; details?: Record<string, unknown> }>;
  /** The newest connection attempt. */
  last(): FakeTransport;
  /** Opens the newest attempt and completes the handshake. */
  up(): FakeTransport;
}

const BACKOFF = { initialDelayMs: 100, maxDelayMs: 400, maxAttempts: 4 };

function harness(overrides: Partial<ReconnectingSocketOptions> = {}, handlers: Partial<UpstreamHandlers> = {}): Harness {
  const transports: FakeTransport[] = [];
  const statuses: UpstreamStatus[] = [];
  const received: string[] = [];
  const logs: Harness['logs'] = [];
  const openTransport: OpenTransport = (url, options) => {
    const transport = new FakeTransport(url, options.headers);
    transports.push(transport);
    return transport;
  };
  const socket: ReconnectingSocket = new ReconnectingSocket(
    {
      name: 'fake',
      url: 'ws://upstream.invalid/session',
      headers: { Authorization: 'Bearer k' },
      setupTimeoutMs: 1_000,
      reconnect: BACKOFF,
      maxQueued: 3,
      maxBufferedBytes: 1_000,
      closeTimeoutMs: 500,
      closeReason: 'done',
      logger: (level, message, details) => logs.push({ level, message, details }),
      openTransport,
      ...overrides,
    },
    {
      onOpen: () => socket.send('hello'),
      onMessage: (data) => {
        received.push(data.toString());
        if (data.toString() === 'welcome') socket.ready();
      },
      onConnectionLost: () => {},
      onStatus: (status) => statuses.push(status),
      ...handlers,
    },
  );
  const last = () => transports.at(-1)!;
  return {
    socket,
    transports,
    statuses,
    received,
    logs,
    last,
    up() {
      const transport = last();
      transport.accept();
      transport.message('welcome');
      return transport;
    },
  };
}

const states = (statuses: UpstreamStatus[]) => statuses.map((status) => status.state);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('connecting', () => {
  it('sends the handshake on open and reports connected only when the owner says ready', () => {
    const h = harness();
    h.socket.start();
    expect(h.transports).toHaveLength(1);
    expect(h.last().url).toBe('ws://upstream.invalid/session');
    expect(h.last().headers).toEqual({ Authorization: 'Bearer k' });
    h.last().accept();
    expect(h.last().sent).toEqual(['hello']);
    expect(h.statuses).toEqual([]);
    expect(h.socket.state).toBe('connecting');
    h.last().message('welcome');
    expect(h.received).toEqual(['welcome']);
    expect(h.statuses).toEqual([{ state: 'connected' }]);
    expect(h.socket.state).toBe('connected');
  });

  it('streams sent before the session is up go out after the handshake, in order', () => {
    const h = harness();
    h.socket.start();
    h.socket.stream('a');
    h.socket.stream('b');
    const transport = h.up();
    expect(transport.sent).toEqual(['hello', 'a', 'b']);
    h.socket.stream('c');
    expect(transport.sent).toEqual(['hello', 'a', 'b', 'c']);
  });

  it('a handshake the upstream never confirms ends the attempt after setupTimeoutMs, naming its last error', () => {
    const h = harness();
    h.socket.start();
    h.last().accept();
    h.socket.noteUpstreamError('bad_session: nope');
    vi.advanceTimersByTime(999);
    expect(h.last().terminated).toBe(false);
    vi.advanceTimersByTime(1);
    expect(h.last().terminated).toBe(true);
    expect(h.statuses).toEqual([{ state: 'reconnecting', problem: 'no session within 1000 ms (upstream error: bad_session: nope)' }]);
  });

  it('a transport that cannot be created fails at once', () => {
    const h = harness({
      openTransport: () => {
        throw new Error('bad URL');
      },
    });
    h.socket.start();
    expect(h.statuses).toEqual([{ state: 'failed', failure: { reason: 'cannot_open', problem: 'bad URL' } }]);
    expect(h.socket.state).toBe('failed');
  });
});

describe('reconnecting', () => {
  it('backs off exponentially (100, 200, 400, 400 ms) and reports reconnecting once per outage', () => {
    const h = harness();
    h.socket.start();
    h.up();
    h.last().end(1006);
    expect(h.statuses).toEqual([{ state: 'connected' }, { state: 'reconnecting', problem: 'connection dropped' }]);
    for (const delay of [100, 200, 400, 400]) {
      const before = h.transports.length;
      vi.advanceTimersByTime(delay - 1);
      expect(h.transports).toHaveLength(before);
      vi.advanceTimersByTime(1);
      expect(h.transports).toHaveLength(before + 1);
      h.last().refuse(503);
    }
    expect(states(h.statuses)).toEqual(['connected', 'reconnecting', 'failed']);
  });

  it('fails after maxAttempts reconnect attempts in a row, naming the last problem', () => {
    const h = harness();
    h.socket.start();
    h.last().refuse(503);
    for (let attempt = 1; attempt <= BACKOFF.maxAttempts; attempt++) {
      vi.advanceTimersByTime(BACKOFF.maxDelayMs);
      expect(h.transports).toHaveLength(1 + attempt);
      h.last().refuse(503);
    }
    h.transports.forEach((transport) => expect(transport.terminated).toBe(true));
    expect(h.statuses).toEqual([
      { state: 'reconnecting', problem: 'HTTP 503 at the WebSocket upgrade' },
      { state: 'failed', failure: { reason: 'gave_up', attempts: 4, problem: 'HTTP 503 at the WebSocket upgrade' } },
    ]);
    vi.advanceTimersByTime(60_000);
    expect(h.transports).toHaveLength(5);
  });

  it('the attempt counter and the backoff restart after a session was up', () => {
    const h = harness();
    h.socket.start();
    h.up();
    h.last().end(1006);
    vi.advanceTimersByTime(100);
    h.last().refuse(503);
    vi.advanceTimersByTime(200);
    h.up();
    expect(states(h.statuses)).toEqual(['connected', 'reconnecting', 'connected']);
    h.last().end(1011, 'server restart');
    expect(h.statuses.at(-1)).toEqual({ state: 'reconnecting', problem: 'closed with code 1011 (server restart)' });
    // A new outage starts again at the first delay.
    vi.advanceTimersByTime(99);
    expect(h.transports).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(h.transports).toHaveLength(4);
  });

  it('fails at once on a fatal status at the upgrade, without retrying', () => {
    const h = harness();
    h.socket.start();
    h.last().refuse(401);
    expect(h.statuses).toEqual([{ state: 'failed', failure: { reason: 'refused', status: 401 } }]);
    vi.advanceTimersByTime(60_000);
    expect(h.transports).toHaveLength(1);
  });

  it('fails when a connection the owner marked fatal ends', () => {
    const h = harness();
    h.socket.start();
    h.up();
    h.socket.markFatal('credentials rejected');
    h.last().end(1008);
    expect(h.statuses).toEqual([{ state: 'connected' }, { state: 'failed', failure: { reason: 'rejected', problem: 'credentials rejected' } }]);
    vi.advanceTimersByTime(60_000);
    expect(h.transports).toHaveLength(1);
  });

  it('tells the owner a connection was lost before deciding what comes next', () => {
    const events: string[] = [];
    const h = harness({}, { onConnectionLost: () => events.push('lost'), onStatus: (status) => events.push(status.state) });
    h.socket.start();
    h.up();
    h.last().end(1006);
    expect(events).toEqual(['connected', 'lost', 'reconnecting']);
  });

  it('a throwing owner handler is logged and changes nothing', () => {
    const h = harness({}, {
      onStatus: () => {
        throw new Error('boom');
      },
    });
    h.socket.start();
    const transport = h.up();
    h.socket.stream('x');
    expect(transport.sent).toEqual(['hello', 'x']);
    expect(h.logs.some((log) => log.message === 'fake: a handler threw' && log.details?.err === 'boom')).toBe(true);
  });
});

describe('streamed messages', () => {
  it('keeps only the newest maxQueued while down, and says how many were dropped', () => {
    const h = harness();
    h.socket.start();
    h.up();
    h.last().end(1006);
    for (const message of ['1', '2', '3', '4', '5']) h.socket.stream(message);
    vi.advanceTimersByTime(100);
    const transport = h.up();
    expect(transport.sent).toEqual(['hello', '3', '4', '5']);
    expect(h.logs.find((log) => log.message === 'fake: messages dropped while the upstream was down')?.details).toEqual({ dropped: 2 });
  });

  it('drops streamed messages while the send buffer is over maxBufferedBytes (never queues them)', () => {
    const h = harness();
    h.socket.start();
    const transport = h.up();
    transport.bufferedAmount = 1_001;
    h.socket.stream('late-1');
    h.socket.stream('late-2');
    transport.bufferedAmount = 1_000;
    h.socket.stream('on-time');
    expect(transport.sent).toEqual(['hello', 'on-time']);
    expect(h.logs.filter((log) => log.message === 'fake: upstream is slow; dropping messages')).toHaveLength(1);
  });

  it('control messages are dropped, not queued, while no connection is open', () => {
    const h = harness();
    h.socket.start();
    h.socket.send('too early');
    const transport = h.up();
    expect(transport.sent).toEqual(['hello']);
  });
});

describe('closing', () => {
  it('sends the farewell and waits for the upstream to close', async () => {
    const h = harness();
    h.socket.start();
    const transport = h.up();
    let done = false;
    const closed = h.socket.close({ messages: ['tail', 'bye'], upstreamCloses: true }).then(() => (done = true));
    expect(transport.sent).toEqual(['hello', 'tail', 'bye']);
    expect(transport.closedWith).toBeNull();
    await Promise.resolve();
    expect(done).toBe(false);
    transport.end(1000);
    await closed;
    expect(done).toBe(true);
    h.socket.stream('after');
    expect(transport.sent).toEqual(['hello', 'tail', 'bye']);
    expect(h.statuses).toEqual([{ state: 'connected' }]);
  });

  it('closes with a close frame after a farewell the upstream does not answer by closing', async () => {
    const h = harness();
    h.socket.start();
    const transport = h.up();
    const closed = h.socket.close({ messages: ['tail'], upstreamCloses: false });
    expect(transport.sent).toEqual(['hello', 'tail']);
    expect(transport.closedWith).toEqual({ code: 1000, reason: 'done' });
    transport.end(1000);
    await closed;
  });

  it('terminates an upstream that does not close within closeTimeoutMs', async () => {
    const h = harness();
    h.socket.start();
    const transport = h.up();
    const closed = h.socket.close({ messages: ['bye'], upstreamCloses: true });
    vi.advanceTimersByTime(499);
    expect(transport.terminated).toBe(false);
    vi.advanceTimersByTime(1);
    expect(transport.terminated).toBe(true);
    await closed;
    expect(h.statuses).toEqual([{ state: 'connected' }]);
  });

  it('without a session: no farewell, and a pending reconnect never happens', async () => {
    const h = harness();
    h.socket.start();
    h.last().refuse(503);
    await h.socket.close({ messages: ['bye'], upstreamCloses: true });
    vi.advanceTimersByTime(60_000);
    expect(h.transports).toHaveLength(1);
    expect(h.transports[0]!.sent).toEqual([]);
  });

  it('an attempt still connecting is terminated', async () => {
    const h = harness();
    h.socket.start();
    await h.socket.close({ messages: ['bye'], upstreamCloses: true });
    expect(h.last().terminated).toBe(true);
    expect(h.last().sent).toEqual([]);
  });
});
