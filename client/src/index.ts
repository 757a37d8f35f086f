// @live-interpretation/client: the Live-Interpretation and Support-Chat API, typed from its contract.
// Webhook verification (Node only) is at `@live-interpretation/client/webhooks`.
export { ApiError, unwrap, type ClientOptions, type ErrorBody } from './http.js';
export { createClient, type Client } from './rest.js';
export { eventStream, type Event, type EventStreamOptions } from './events.js';
export {
  CallSide,
  ListenSocket,
  MAX_FRAME_BYTES,
  SAMPLE_RATE,
  StreamSocket,
  WAV_HEADER_BYTES,
  joinCall,
  parseCallLink,
  type CallSideOptions,
  type CallSideSettings,
  type CallSideTarget,
  type Closed,
  type JoinOut,
  type ListenMessage,
} from './call.js';
export type { components, operations, paths } from './schema.js';
