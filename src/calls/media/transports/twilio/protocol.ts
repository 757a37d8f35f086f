/*
 * Twilio Media Streams, bidirectional (`<Connect><Stream>`), as this server speaks it at
 * `/media/twilio/{channel_id}` (TWILIO_STREAM_PATH_PREFIX of ../../../dial.ts; the channel is the
 * side's stream channel, as in JoinOut `stream.channel_id`).
 *
 * Twilio -> server, JSON text frames:
 *   {"event":"connected","protocol":"Call","version":"1.0.0"}
 *   {"event":"start","sequenceNumber":"1","streamSid":"MZ...","start":{"streamSid","accountSid","callSid",
 *     "tracks":["inbound"],"customParameters":{"token":"..."},
 *     "mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}
 *       `customParameters.token` admits the stream: the single-use token of a dialled leg (TwiML made by
 *       POST /v1/calls/{id}/dial), or the side's own stream token (JoinOut `stream.token`; a bridge an
 *       integrator runs itself, test mode included, where the phone hears its own voice).
 *   {"event":"media","streamSid","media":{"track":"inbound","chunk","timestamp","payload":<base64 mu-law>}}
 *       20 ms (160 bytes) each; decoded, resampled to 24 kHz, the side's voice.
 *   {"event":"mark","streamSid","mark":{"name"}}      a mark we sent: the audio before it was played
 *   {"event":"dtmf","streamSid","dtmf":{"track","digit"}}   ignored (never logged: callers type PINs)
 *   {"event":"stop","streamSid","stop":{...}}         the call hung up: the phone leaves the call
 *
 * Server -> Twilio:
 *   {"event":"media","streamSid","media":{"payload"}}  what the side hears, 8 kHz mu-law, one 20 ms
 *                                                      frame per 20 ms (paced; never a burst)
 *   {"event":"mark","streamSid","mark":{"name"}}       after each stretch of audio: Twilio echoes it once
 *                                                      played, so the server knows how far the phone is
 *   {"event":"clear","streamSid"}                      drop what Twilio still holds: it is stale (the other
 *                                                      side changed language, or the phone fell behind)
 *
 * Refused before the upgrade (JSON `{"detail"}`): 404 unknown channel, 409 call ended, 409 not ready
 * (languages), 429 guessing, 503 shutting down. After it, the socket closes with 1008 for a missing or
 * wrong token, 1007 for a message that is not Twilio's (bad JSON, unknown shape, another media format),
 * 4000 when the call ends, 4003 when a newer stream of the side replaces this one, 1001 at shutdown.
 */

/** 20 ms of 8 kHz mu-law. */
export const FRAME_BYTES = 160;
export const FRAME_MS = 20;
/** Largest message accepted from Twilio (a media message holds 160 bytes, about 300 characters). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** A media payload longer than 1 s of audio is not Twilio's. */
export const MAX_PAYLOAD_BYTES = 8_000;

export const CLOSE = {
  stopped: { code: 1000, reason: 'stream stopped' },
  shuttingDown: { code: 1001, reason: 'server shutting down' },
  idle: { code: 1001, reason: 'no message in time' },
  badMessage: { code: 1007, reason: 'not a Twilio Media Streams message' },
  badToken: { code: 1008, reason: 'missing or invalid token parameter' },
  internal: { code: 1011, reason: 'internal error' },
  callEnded: { code: 4000, reason: 'call ended' },
  replaced: { code: 4003, reason: 'stream replaced' },
  noStart: { code: 1008, reason: 'no start message in time' },
} as const;

export interface StartMessage {
  event: 'start';
  streamSid: string;
  callSid: string | null;
  token: string | null;
}

export type InboundMessage =
  | { event: 'connected' }
  | StartMessage
  | { event: 'media'; inbound: boolean; payload: Buffer }
  | { event: 'mark'; name: string }
  | { event: 'dtmf' }
  | { event: 'stop' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** One text frame from Twilio; null when it is not a message of the protocol. */
export function parseMessage(text: string): InboundMessage | null {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(message) || typeof message.event !== 'string') return null;
  switch (message.event) {
    case 'connected':
    case 'dtmf':
    case 'stop':
      return { event: message.event };
    case 'start': {
      const start = message.start;
      if (!isObject(start)) return null;
      const streamSid = typeof start.streamSid === 'string' ? start.streamSid : message.streamSid;
      if (typeof streamSid !== 'string' || !streamSid || streamSid.length > 64) return null;
      const format = start.mediaFormat;
      if (!isObject(format) || format.encoding !== 'audio/x-mulaw' || Number(format.sampleRate) !== 8000 || Number(format.channels) !== 1) return null;
      const params = isObject(start.customParameters) ? start.customParameters : {};
      return {
        event: 'start',
        streamSid,
        callSid: typeof start.callSid === 'string' ? start.callSid : null,
        token: typeof params.token === 'string' ? params.token : null,
      };
    }
    case 'media': {
      const media = message.media;
      if (!isObject(media) || typeof media.payload !== 'string') return null;
      if (media.payload.length > (MAX_PAYLOAD_BYTES * 4) / 3 + 4 || !BASE64.test(media.payload)) return null;
      return { event: 'media', inbound: media.track === undefined || media.track === 'inbound', payload: Buffer.from(media.payload, 'base64') };
    }
    case 'mark': {
      const mark = message.mark;
      if (!isObject(mark) || typeof mark.name !== 'string') return null;
      return { event: 'mark', name: mark.name };
    }
    default:
      return null;
  }
}

export const mediaMessage = (streamSid: string, mulaw: Buffer) =>
  JSON.stringify({ event: 'media', streamSid, media: { payload: mulaw.toString('base64') } });
export const markMessage = (streamSid: string, name: string) => JSON.stringify({ event: 'mark', streamSid, mark: { name } });
export const clearMessage = (streamSid: string) => JSON.stringify({ event: 'clear', streamSid });
