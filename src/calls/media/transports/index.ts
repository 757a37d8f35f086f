// THE list of transports: one line each. The server starts whatever is here (its upgrade routes, its
// listener, its metrics) and closes it at shutdown; a new transport is a folder beside these and a line
// below (docs/calls-media-plane.md, "How to add a transport"). The bridge between instances is not
// listed: it is where rooms live rather than a way in, and starts with Redis (src/app/server.ts).
import type { TransportFactory } from '../transport.js';
import { audioSocketTransport } from './audiosocket/server.js';
import { twilioTransport } from './twilio/server.js';
import { webSocketTransport } from './websocket/server.js';

export const TRANSPORTS: readonly TransportFactory[] = [
  webSocketTransport,
  twilioTransport,
  audioSocketTransport,
];
