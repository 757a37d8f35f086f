import type { Response } from 'express';
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { recordingOf } from './messages.js';

/** Sends a voice message's recording as uploaded; 404 for text messages and erased recordings. */
export async function sendRecording(db: Knex, sessionId: string, messageId: number, res: Response): Promise<void> {
  const recording = await recordingOf(db, sessionId, messageId);
  if (!recording) throw errors.notFound('recording');
  res.status(200).type(recording.mime_type).set('Cache-Control', 'private, max-age=3600').send(recording.data);
}
