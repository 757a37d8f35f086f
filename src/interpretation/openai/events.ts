// What both OpenAI realtime endpoints share on the wire: the `error` server event, and reading an
// incoming text frame into an event. The endpoints' own events: ./translationEvents.ts, ./realtimeEvents.ts.
//
// Upstream JSON is not validated beyond `type`: the event types say what the upstream documents, and
// handlers read fields defensively (readText), so a missing or mistyped field is ignored, not fatal.

/** Base64 PCM16 mono 24 kHz audio. */
export type AudioBase64 = string;

/** Most errors leave the session open; authentication errors end it for good. */
export interface ServerErrorEvent {
  type: 'error';
  event_id?: string;
  error: { type?: string; code?: string | null; message?: string; param?: string | null; event_id?: string | null };
}

/** An event as it arrives: a JSON object with a string `type`, nothing else checked. */
export type IncomingEvent = { type: string } & Record<string, unknown>;

/** The event in a text frame, or null when it is not a JSON object with a string `type`. */
export function parseIncomingEvent(data: Buffer): IncomingEvent | null {
  try {
    const parsed: unknown = JSON.parse(data.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || typeof (parsed as { type?: unknown }).type !== 'string') return null;
    return parsed as IncomingEvent;
  } catch {
    return null;
  }
}

/** A field read defensively: the string, or '' for anything else. */
export const readText = (value: unknown): string => (typeof value === 'string' ? value : '');

/** An audio delta's PCM, or null when there is none. */
export function decodeAudio(delta: unknown): Buffer | null {
  const b64 = readText(delta);
  if (!b64) return null;
  const pcm = Buffer.from(b64, 'base64');
  return pcm.length ? pcm : null;
}
