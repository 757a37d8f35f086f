// A transport is a plug-in: a toy one defined entirely here, given to the server the way its list is
// (startServer's `transports`), with no edit of the plane, the metrics or the server. It gets its upgrade
// route, its gauges on GET /metrics and its counters by name; it admits with the shared steps, joins a
// side of a call's room (in test mode it hears its own voice back), and is closed at shutdown.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { parseChannelId, verifyMediaSecret } from '../../src/calls/join.js';
import {
  admit,
  loadCall,
  notGuessing,
  notWhileClosing,
  refuse,
  requireOpen,
  requireReady,
  type AdmissionContext,
  type AdmissionStep,
  type RefusalReason,
} from '../../src/calls/media/admission.js';
import { EndpointState, type EndReason, type MediaDuplex } from '../../src/calls/media/endpoints.js';
import type { MediaTransport, TransportContext, TransportFactory } from '../../src/calls/media/transport.js';
import { TRANSPORTS } from '../../src/calls/media/transports/index.js';
import type { Side } from '../../src/calls/side.js';
import { refuseUpgrade } from '../../src/http/connections.js';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN } from '../support/testServer.js';
import { callApi, connect, pattern, refusal, whenClosed, wsBase } from './support.js';
import { waitUntil } from '../support/waiting.js';

const TOY_PREFIX = '/toy/';
const REFUSAL_STATUS: Partial<Record<RefusalReason, number>> = { unknown_call: 404, bad_token: 401, too_many_failed_attempts: 429, shutting_down: 503 };

interface ToyAdmission extends AdmissionContext {
  url: URL;
  side?: Side;
}

const parseChannel: AdmissionStep<ToyAdmission> = (ctx) => {
  const channel = parseChannelId(ctx.url.pathname.slice(TOY_PREFIX.length));
  if (!channel) return refuse('unknown_call');
  ctx.callId = channel.callId;
  ctx.side = channel.side;
  return undefined;
};

const verifyToken: AdmissionStep<ToyAdmission> = (ctx) =>
  verifyMediaSecret(ctx.call!, ctx.side!, 'stream', ctx.url.searchParams.get('token')) ? undefined : refuse('bad_token');

/** A side's voice in and what it hears out, as raw 24 kHz PCM in binary frames. */
class ToySocket extends EndpointState implements MediaDuplex {
  readonly kind = 'toy';
  readonly credential = 'link' as const;
  readonly format = 'pcm' as const;
  readonly sourceKey = 'toy';

  constructor(
    readonly ws: WebSocket,
    readonly side: Side,
  ) {
    super();
  }

  audio(pcm: Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(pcm);
  }

  protected close(reason: EndReason): void {
    this.ws.close(reason === 'shutting_down' ? 1001 : 4000, reason);
  }
}

class ToyTransport implements MediaTransport {
  readonly name = 'toy';
  readonly upgrades = [{ pathPrefix: TOY_PREFIX, handle: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head) }];
  readonly metrics = [
    { name: 'toy_sockets_open', help: 'Toy sockets open', read: () => this.sockets.size },
    { name: 'toy_refusals', help: 'Toy upgrades refused since start', read: () => this.refused },
  ];
  readonly sockets = new Set<ToySocket>();
  private readonly wss = new WebSocketServer({ noServer: true });
  refused = 0;
  framesIn = 0;
  closed = false;

  constructor(private readonly context: TransportContext) {}

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const { plane, app } = this.context;
    const ctx: ToyAdmission = {
      calls: plane.deps.calls,
      closing: () => plane.closing,
      address: app.failedAttempts.addressOf(req),
      failedAttempts: app.failedAttempts,
      url: new URL(req.url!, 'http://toy.invalid'),
    };
    const steps = [notGuessing, notWhileClosing, parseChannel, loadCall, verifyToken, requireOpen, requireReady];
    void admit(ctx, steps).then((refusal) => {
      if (refusal) {
        this.refused++;
        return refuseUpgrade(socket, REFUSAL_STATUS[refusal.refused] ?? 409, refusal.refused);
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const endpoint = new ToySocket(ws, ctx.side!);
        this.sockets.add(endpoint);
        ws.once('close', () => {
          this.sockets.delete(endpoint);
          endpoint.detach();
        });
        const feed = plane.enter(ctx.call!, endpoint, () => null).audio;
        ws.on('message', (data: Buffer) => {
          this.framesIn++;
          feed(data);
        });
      });
    });
  }

  stats() {
    return { sockets: this.sockets.size, framesIn: this.framesIn, refused: this.refused };
  }

  openConnections(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const endpoint of this.sockets) endpoint.ws.terminate();
  }
}

describe(`a transport plugged in from outside the server (${backendName})`, () => {
  it('gets its upgrade route, its metrics and counters, admits and joins a side, and is closed at shutdown', async () => {
    let toy: ToyTransport | undefined;
    const toyTransport: TransportFactory = (context) => (toy = new ToyTransport(context));
    const t = await startTestServer({}, { transports: [...TRANSPORTS, toyTransport] });
    let stopped = false;
    try {
      const key = (await t.createKey(await t.createOrg(), 'test')).key;
      const calls = callApi(t);
      const call = await calls.createCall(key, { customer_language: 'fi' });
      const agent = await calls.join(call.id, call.agentKey);
      const toyUrl = (channel: string, token: string) => `${wsBase(t)}${TOY_PREFIX}${channel}?token=${encodeURIComponent(token)}`;

      // Its admission answers its own upgrades.
      expect(await refusal(toyUrl('ch_nope_a', 'x'))).toEqual({ status: 404, body: { detail: 'unknown_call' } });
      expect(await refusal(toyUrl(agent.stream!.channel_id, 'wrong'))).toEqual({ status: 401, body: { detail: 'bad_token' } });

      // Admitted, it joins the agent's side: test mode echoes the side's voice back to it.
      const ws = await connect(toyUrl(agent.stream!.channel_id, agent.stream!.token));
      await waitUntil(() => t.server.media.room(call.id)?.stats().endpoints.toy === 1, 'the toy socket in the room');
      const voice = pattern(4_800, 7);
      let heard = Buffer.alloc(0);
      const echoed = new Promise<void>((resolve) =>
        ws.on('message', (data: Buffer) => {
          heard = Buffer.concat([heard, data]);
          if (heard.length >= voice.length) resolve();
        }),
      );
      ws.send(voice);
      await echoed;
      expect(heard.equals(voice)).toBe(true);

      // Its counters by its name, its connections in the server's, its gauges on /metrics.
      expect(t.server.media.stats().transports.toy).toEqual({ sockets: 1, framesIn: 1, refused: 2 });
      expect((await t.server.connectionStats()).transports.toy).toBe(1);
      const scraped = await (await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
      expect(scraped).toContain('\ntoy_sockets_open 1\n');
      expect(scraped).toContain('\ntoy_refusals 2\n');

      // Shutdown ends its endpoint in the room, then closes the transport.
      const closing = whenClosed(ws);
      await t.stop();
      stopped = true;
      expect(await closing).toEqual({ code: 1001, reason: 'shutting_down' });
      expect(toy!.closed).toBe(true);
    } finally {
      if (!stopped) await t.stop();
    }
  });
});
