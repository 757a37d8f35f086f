import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { recordingOf } from './messages.js';

/** A voice message's recording as uploaded, and how long a client may keep it. */
export interface RecordingFile {
  contentType: string;
  data: Buffer;
  /** Private: a recording is one conversation's, never a shared cache's. */
  cacheControl: string;
}

/** The recording of a voice message; 404 for text messages and erased recordings. */
export async function recordingFile(db: Knex, sessionId: string, messageId: number): Promise<RecordingFile> {
  const recording = await recordingOf(db, sessionId, messageId);
  if (!recording) throw errors.notFound('recording');
  return { contentType: recording.mime_type, data: recording.data, cacheControl: 'private, max-age=3600' };
}
