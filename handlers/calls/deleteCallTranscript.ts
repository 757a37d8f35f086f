import { defineHandler } from '../../src/http/handler.js';
import { findCall } from '../../src/calls/calls.js';
import { eraseTranscript } from '../../src/calls/transcripts.js';

export default defineHandler<'deleteCallTranscript'>(async ({ app, principal, params }) => {
  await eraseTranscript(app.db, (await findCall(app.db, principal, params.call_id)).id);
  return { status: 204, body: undefined };
});
