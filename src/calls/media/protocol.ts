/*
 * The media plane's wire contract: WebSocket endpoints, their HTTP refusals, close codes, text frames
 * and limits. This block is the reference docs/calls-media-plane.md and the API contract copy from.
 *
 * ENDPOINTS (WebSocket upgrade on the API's own HTTP server; addresses come from the public join
 * endpoint, JoinOut.stream and JoinOut.listen)
 *
 *   GET /media/stream/{channel_id}?token=<token>&source_id=<source_id>
 *     The channel's own side sends its voice: binary frames of mono PCM16 little-endian at 24 kHz,
 *     any whole number of samples per frame (20 ms = 960 bytes is typical), at most 1 s (48,000 bytes)
 *     per frame. `source_id` (optional, default the side; 1-64 of A-Z a-z 0-9 . _ : -) names the
 *     sender: a new stream with the same source_id replaces the older one (4003). Different sources of
 *     one side (and its phone line) are mixed into one voice: a lone source passes through undelayed;
 *     with several, each waits at most until the others' audio for the same moment has come, a source
 *     silent for 60 ms no longer holds the others back, and none runs more than 100 ms ahead. The
 *     server sends nothing on a stream socket except pings and the close frame.
 *
 *   GET /media/listen/{channel_id}?unlock=<unlock>
 *     The side that owns the unlock hears the channel: `listen.channel_id` of side X is the other side's
 *     stream channel. Binary frames: complete WAV files (44-byte RIFF header, 24 kHz mono PCM16), sent
 *     as soon as the audio exists: one chunk per piece of audio (a 20 ms stream frame comes out as a
 *     20 ms chunk; an interpreter's output as it is produced), pieces over 100 ms cut into chunks of at
 *     most 100 ms (4,800 bytes of samples). Play them back to back. Text frames: JSON objects, see TEXT FRAMES. Anything the client sends on a listen socket is ignored.
 *
 *   GET /media/signal/{channel_id}?token=<token>
 *     The call page's WebRTC signalling (video): `signal.channel_id` and `signal.token` of the side's
 *     join answer (the channel is the side's own stream channel; the token is its own, like the stream
 *     token derived from the side's key, so a new link makes it stale). Text frames only, JSON objects
 *     of at most 64 KiB (SIGNAL_MAX_FRAME_BYTES). A page may send only these (PEER_SIGNAL_TYPES), each
 *     with exactly these keys:
 *       {"type":"offer","sdp":string}   {"type":"answer","sdp":string}   (sdp: 1-32,768 characters)
 *       {"type":"candidate","candidate":RTCIceCandidateInit|null}   (null: the end of candidates;
 *           candidate: {candidate?: string of at most 1,024, sdpMid?: string of at most 256 | null,
 *           sdpMLineIndex?: integer 0-65535 | null, usernameFragment?: string of at most 256 | null})
 *       {"type":"state","muted":boolean,"camera":boolean,"speaking":boolean}   (what the page shows)
 *     A frame that is not one of them (another type, such as a frame shaped like the server's, a key
 *     more or less, a value of another type or too long) closes the socket with 1008 and reaches nobody.
 *     Each accepted frame goes to every signalling socket of the other side of the call (nobody else
 *     sees it) inside an envelope only the server writes, so a page tells the other side's words from
 *     the server's:
 *       {"type":"peer_signal","signal":<the frame, with only the keys above>}
 *     The server's own frames:
 *       {"type":"peer","present":boolean}   on connect and whenever it changes: whether the other side
 *                                           has a signalling socket open
 *       {"type":"caption",...}              this side's own words as the other side's
 *                                           listeners got them (CaptionFrame; captions both ways)
 *       {"type":"ice_servers","ice_servers":[RTCIceServer]}   with TURN_URLS + TURN_SECRET: fresh TURN
 *                                           credentials, every half TURN_CREDENTIAL_TTL_SECONDS while
 *                                           the socket is open (apply with RTCPeerConnection.setConfiguration)
 *     Closed like the media sockets: 4000 call ended, 4001 link replaced, 4004 left, 1001 shutting
 *     down; 1003 binary frame, 1008 not a frame a page may send, 1009 too large; refusals as for a
 *     stream socket. Voice never goes over WebRTC: the pages send video tracks only (each side hears
 *     the other through the interpretation path).
 *
 *   Live mode: a side hears the other side's voice interpreted into its own language. Test mode: each
 *   side hears its own voice back, untranslated (provenance engine "test", model "echo"). When live
 *   interpretation is unavailable (no engine, upstream failure, balance exhausted) the call stays up
 *   and the other side hears the original voice untranslated (provenance engine "none").
 *
 * HTTP REFUSALS (answered instead of the upgrade; body `{"detail": "..."}`, then the connection closes)
 *   400  source_id malformed
 *   401  token (stream) or unlock (listen) missing or wrong; also after a new link made it stale
 *   404  no such media endpoint, malformed channel id, or no such call
 *   409  the call has ended, or is not ready (the customer's language is not known yet)
 *   429  too many refused upgrades (401, 404) from this client address in the last minute
 *        (FAILED_ATTEMPTS_PER_MINUTE, default 30): refused unchecked, `Retry-After` says when to retry
 *   429  the side already holds its limit of open sockets of this kind: MEDIA_SOCKETS_PER_SIDE (default
 *        10) stream sockets and as many listen sockets per side of a call; close one first
 *   500  internal error (detail reveals nothing)
 *   503  the server is shutting down
 *   (An invalid WebSocket handshake, e.g. a missing Sec-WebSocket-Key, gets 400 from the WebSocket
 *   layer; a plain GET without an upgrade gets the API's JSON 404.)
 *
 * CLOSE CODES (code, reason as sent)
 *   1001  "server shutting down"
 *   1003  "text frames are not accepted: send binary PCM16 LE 24 kHz mono"     (stream socket)
 *   1007  "binary frames must hold whole 16-bit samples (even byte length)"    (stream socket)
 *   1009  "frame larger than 48000 bytes (1 s of audio)"                      (stream socket; a frame
 *         beyond the transport maximum of 1 MiB is cut by the WebSocket layer with 1009, no reason)
 *   1008  (signalling socket) a frame a page may not send; the reason says what a frame of its type
 *         holds (SIGNAL_REFUSED below)
 *   1011  "internal error"
 *   4000  "call ended"                 every socket of the call; listeners get a `call_ended` notice first
 *   4001  "link replaced"              the side's stream and listen sockets after POST /v1/calls/{id}/link;
 *                                      listeners get a `link_replaced` notice first; the other side stays
 *   4002  "reconnect"                  listeners of side Y when side X changed its language; they get a
 *                                      `reconnect` notice first and should reconnect (same address)
 *   4003  "source replaced"            a stream socket superseded by a newer one with the same source_id
 *   4004  "left the call"              the customer's stream and listen sockets after its hang-up; listeners
 *                                      get a `left` notice first; the same link joins again
 *   Heartbeat: the server pings every 30 s and drops a socket that has not answered the previous ping.
 *
 * TEXT FRAMES (server -> listen socket, JSON)
 *   {"type":"provenance","engine":string,"model":string}
 *       what produces the audio this listener hears; sent on connect when known and whenever it changes:
 *       test mode {"engine":"test","model":"echo"}; untranslated {"engine":"none","model":"untranslated"};
 *       live interpretation: the engine's own names.
 *   {"type":"caption","id":string,"final":boolean,"original":string,"translated":string,
 *    "language":string,"source_language":string}
 *       live mode: partial captions share an id until the final one; test mode: one final placeholder
 *       per turn of speech, `[<language>] speech <seconds> s`; `language` is the listener's
 *       language (what `translated` is in), `source_language` the speaker's.
 *   {"type":"notice","code":string,"message":string}
 *       codes (NOTICE below): call_ended, link_replaced, reconnect, translation_unavailable,
 *       translation_reconnecting, balance_exhausted, listener_slow.
 */

import type { IceServer } from '../../config.js';

export const SAMPLE_RATE = 24_000;
export const BYTES_PER_SAMPLE = 2;
export const BYTES_PER_SECOND = SAMPLE_RATE * BYTES_PER_SAMPLE;
/** Largest stream frame the media plane accepts: one second of audio. */
export const MAX_STREAM_FRAME_BYTES = BYTES_PER_SECOND;
/** Transport backstop (ws maxPayload): larger frames are cut by the WebSocket layer itself. */
export const MAX_WS_PAYLOAD_BYTES = 1024 * 1024;
/** Listen audio is sent as it comes, in WAV chunks of at most this much audio. */
export const CHUNK_MS = 100;
export const CHUNK_BYTES = (BYTES_PER_SECOND * CHUNK_MS) / 1000;
/** A listener whose unsent data exceeds this (1 s of audio) loses chunks until it catches up. */
export const LISTENER_BUFFER_CAP_BYTES = BYTES_PER_SECOND;
export const HEARTBEAT_MS = 30_000;
export const SOURCE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export const STREAM_PATH_PREFIX = '/media/stream/';
export const SIGNAL_PATH_PREFIX = '/media/signal/';
/** A signalling frame (an SDP offer with many codecs is a few KiB) may not be larger than this. */
export const SIGNAL_MAX_FRAME_BYTES = 64 * 1024;
/** Unsent signalling bytes to a peer beyond which the peer is taken for stuck and frames to it dropped. */
export const SIGNAL_BUFFER_CAP_BYTES = 1024 * 1024;
/** The frames a call page may send on its signalling socket (its own negotiation and state). */
export const PEER_SIGNAL_TYPES = ['offer', 'answer', 'candidate', 'state'] as const;
export type PeerSignalType = (typeof PEER_SIGNAL_TYPES)[number];
/** Longest SDP an offer or answer may carry (a browser's offer with audio, video and many codecs is a few KiB). */
export const SIGNAL_MAX_SDP_CHARS = 32 * 1024;
/** Longest ICE candidate line (a host, srflx or relay candidate is 100-200 characters). */
export const SIGNAL_MAX_CANDIDATE_CHARS = 1024;
/** Longest sdpMid and usernameFragment (an ICE ufrag is at most 256 characters, RFC 8839). */
export const SIGNAL_MAX_ID_CHARS = 256;
export const LISTEN_PATH_PREFIX = '/media/listen/';

export interface CloseCode {
  code: number;
  reason: string;
}

export const CLOSE = {
  shuttingDown: { code: 1001, reason: 'server shutting down' },
  textFrame: { code: 1003, reason: 'text frames are not accepted: send binary PCM16 LE 24 kHz mono' },
  oddLength: { code: 1007, reason: 'binary frames must hold whole 16-bit samples (even byte length)' },
  tooBig: { code: 1009, reason: `frame larger than ${MAX_STREAM_FRAME_BYTES} bytes (1 s of audio)` },
  internal: { code: 1011, reason: 'internal error' },
  signalBinary: { code: 1003, reason: 'binary frames are not accepted: send JSON text frames' },
  signalTooBig: { code: 1009, reason: `signalling frame larger than ${64 * 1024} bytes` },
  callEnded: { code: 4000, reason: 'call ended' },
  linkReplaced: { code: 4001, reason: 'link replaced' },
  reconnect: { code: 4002, reason: 'reconnect' },
  sourceReplaced: { code: 4003, reason: 'source replaced' },
  left: { code: 4004, reason: 'left the call' },
} as const satisfies Record<string, CloseCode>;

/**
 * 1008: why a signalling frame is refused (not a peer signal at all, or which shape its type has). The
 * reasons name no part of the frame: they are fixed texts, within a close frame's 123 bytes.
 */
export const SIGNAL_REFUSED = {
  notPeerSignal: { code: 1008, reason: 'a page sends JSON objects of type offer, answer, candidate or state only' },
  offer: { code: 1008, reason: `an offer is {"type":"offer","sdp":string of 1-${SIGNAL_MAX_SDP_CHARS} characters}, no other key` },
  answer: { code: 1008, reason: `an answer is {"type":"answer","sdp":string of 1-${SIGNAL_MAX_SDP_CHARS} characters}, no other key` },
  candidate: { code: 1008, reason: 'a candidate is {"type":"candidate","candidate":RTCIceCandidateInit or null}, no other key' },
  state: { code: 1008, reason: 'a state is {"type":"state","muted":boolean,"camera":boolean,"speaking":boolean}, no other key' },
} as const satisfies Record<'notPeerSignal' | PeerSignalType, CloseCode>;

export const REFUSAL = {
  badSourceId: { status: 400, detail: 'source_id must be 1-64 characters of A-Z a-z 0-9 . _ : -' },
  badToken: { status: 401, detail: 'missing or invalid token for this channel' },
  badUnlock: { status: 401, detail: 'missing or invalid unlock for this listen channel' },
  noEndpoint: { status: 404, detail: 'no such media endpoint: use /media/stream/{channel_id}, /media/listen/{channel_id} or /media/signal/{channel_id}' },
  unknownChannel: { status: 404, detail: 'channel not found' },
  callEnded: { status: 409, detail: 'the call has ended' },
  notReady: { status: 409, detail: "the call is not ready: the customer's language is not known yet" },
  tooManySockets: { status: 429, detail: 'this side of the call already holds as many sockets of this kind as it may; close one before opening another' },
  internal: { status: 500, detail: 'internal error' },
  shuttingDown: { status: 503, detail: 'the server is shutting down' },
} as const satisfies Record<string, { status: number; detail: string }>;

export const NOTICE = {
  callEnded: 'call_ended',
  linkReplaced: 'link_replaced',
  reconnect: 'reconnect',
  translationUnavailable: 'translation_unavailable',
  translationReconnecting: 'translation_reconnecting',
  balanceExhausted: 'balance_exhausted',
  listenerSlow: 'listener_slow',
  left: 'left',
} as const;
export type NoticeCode = (typeof NOTICE)[keyof typeof NOTICE];

export const NOTICE_MESSAGES: Record<NoticeCode, string> = {
  call_ended: 'the call has ended',
  link_replaced: 'a new link was made for this side; this connection is no longer valid',
  reconnect: 'the other side changed its language: reconnect to hear it in the new language',
  translation_unavailable: 'live interpretation is unavailable; you hear the other side untranslated',
  translation_reconnecting: 'live interpretation is reconnecting',
  balance_exhausted: "the organization's prepaid balance has run out: interpretation stopped; you hear the other side untranslated",
  listener_slow: 'this connection is not reading fast enough: audio chunks are being dropped',
  left: 'this side hung up; open the same link again to come back',
};

export interface ProvenanceFrame {
  type: 'provenance';
  engine: string;
  model: string;
}
export interface CaptionFrame {
  type: 'caption';
  id: string;
  final: boolean;
  original: string;
  translated: string;
  language: string;
  source_language: string;
}
export interface NoticeFrame {
  type: 'notice';
  code: NoticeCode;
  message: string;
}
/** Server -> signalling socket: whether the other side has a signalling socket open. */
export interface PeerFrame {
  type: 'peer';
  present: boolean;
}

/** Server -> signalling socket: fresh ICE servers (TURN credentials) before the ones the side holds expire. */
export interface IceServersFrame {
  type: 'ice_servers';
  ice_servers: IceServer[];
}

export type TextFrame = ProvenanceFrame | CaptionFrame | NoticeFrame;

export const TEST_PROVENANCE: ProvenanceFrame = { type: 'provenance', engine: 'test', model: 'echo' };
export const UNTRANSLATED_PROVENANCE: ProvenanceFrame = { type: 'provenance', engine: 'none', model: 'untranslated' };

export const notice = (code: NoticeCode, message: string = NOTICE_MESSAGES[code]): NoticeFrame => ({ type: 'notice', code, message });
