// Voice messages: measure the recording, transcribe it (live) or use the placeholder (test), store it
// as a message translated for the other side, and bill its seconds.
import type { Payer } from '../auth/principal.js';
import { AudioError, inspectAudio, MAX_VOICE_SECONDS, type AudioInfo } from '../audio/inspect.js';
import { errors } from '../errors.js';
import { fundedPayer, releaseOnFailure, reserveTogether } from '../money/index.js';
import { TranscriptionError } from '../transcription/engine.js';
import { findPostedMessage, storeMessage, type PostedMessage, type Sender } from './messages.js';
import { assertOpen, type SessionRow } from './sessions.js';
import type { Transcribers } from '../transcription/engine.js';
import type { Translators } from '../translation/engine.js';
import type { EventBus } from '../events/bus.js';
import type { Knex } from 'knex';

export interface VoiceUpload {
  data: Buffer;
  mimeType: string;
  filename: string;
}

type VoiceDeps = { db: Knex; events: EventBus; actingApp: string | null; engines: Translators & Transcribers; instanceId: string };

const audioProblem = (msg: string, type: string) => errors.invalid([{ loc: ['body', 'audio'], msg, type }]);

async function measure(upload: VoiceUpload): Promise<AudioInfo> {
  let info: AudioInfo;
  try {
    info = await inspectAudio(upload.data, upload.mimeType);
  } catch (err) {
    if (!(err instanceof AudioError)) throw err;
    const messages = {
      unsupported: 'the file is not audio in a supported format (WebM, Ogg, MP4/M4A, MP3 or WAV)',
      broken: 'the audio could not be decoded: the file is damaged or incomplete',
      empty: 'the recording contains no audio',
    };
    throw audioProblem(messages[err.reason], `audio_${err.reason}`);
  }
  if (info.durationSeconds > MAX_VOICE_SECONDS) {
    throw audioProblem(
      `the recording is ${info.durationSeconds.toFixed(1)} seconds long; at most ${MAX_VOICE_SECONDS} seconds are allowed`,
      'audio_too_long',
    );
  }
  return info;
}

/**
 * Characters of transcript held per second of recording for its translation: fast speech is about 20
 * characters a second. The characters actually translated are charged; a longer transcript pays the
 * rest from the available balance (402 when it cannot).
 */
export const TRANSCRIPT_CHARACTERS_PER_SECOND = 25;

/**
 * Measures the recording, reserves its seconds (402 when the available balance cannot cover them),
 * transcribes it, and posts it: the message, its recording and its charges commit together. A failure
 * or refusal at any step releases what was held.
 */
export async function postVoiceMessage(
  deps: VoiceDeps,
  session: SessionRow,
  upload: VoiceUpload,
  sender: Sender,
  authorName: string | null | undefined,
  requestRef: string | null,
  /** The customer's page's language: the message's language when neither the transcription nor its text tells. */
  languageHint?: string | null,
): Promise<PostedMessage> {
  assertOpen(session);
  const earlier = await findPostedMessage(deps.db, requestRef);
  if (earlier) return earlier;
  const info = await measure(upload);
  const payer: Payer = { orgId: session.org_id, mode: session.mode };
  const org = await fundedPayer(deps.db, payer);
  const engine = deps.engines.transcription(payer.mode);
  const ownLanguage = sender === 'agent' ? session.agent_language : session.customer_language;
  // Billed per started second; the transcript's translation is held with them, so that a message whose
  // seconds the balance pays for can pay for its translation too, whatever else runs meanwhile.
  const seconds = Math.ceil(info.durationSeconds);
  const [reservation, allowance] = await reserveTogether(deps.db, deps.instanceId, payer, org, [
    { kind: 'voice_message', quantity: seconds },
    { kind: 'text', quantity: seconds * TRANSCRIPT_CHARACTERS_PER_SECOND },
  ]);

  return releaseOnFailure(deps.db, [reservation, allowance], async () => {
    let transcript;
    try {
      transcript = await engine.transcribe(
        { data: upload.data, mimeType: info.mimeType, filename: upload.filename },
        { language: ownLanguage },
      );
    } catch (err) {
      if (err instanceof TranscriptionError) {
        throw errors.upstream(`the transcription engine (${err.engine}) failed: ${err.message}; nothing was billed, try again`);
      }
      throw err;
    }
    return storeMessage(
      deps,
      session,
      { sender, text: transcript.text || '…', author_name: authorName, language: transcript.language, language_hint: languageHint },
      requestRef,
      { recording: { data: upload.data, mimeType: info.mimeType, durationSeconds: info.durationSeconds }, reservation, allowance },
    );
  });
}

/** The uploaded `audio` part, as the HTTP layer received it; 422 when the request has none. */
export function uploadedAudio(file: VoiceUpload | undefined): VoiceUpload {
  if (!file) throw audioProblem('the audio file is missing', 'missing');
  return { ...file, filename: file.filename || 'voice-message' };
}
