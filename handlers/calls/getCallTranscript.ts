import { defineHandler } from '../../src/http/handler.js';
import { findCall } from '../../src/calls/calls.js';
import { renderTranscript, transcriptPage } from '../../src/calls/transcripts.js';

const RENDERED = { vtt: 'text/vtt', txt: 'text/plain' } as const;

export default defineHandler<'getCallTranscript'>(async ({ app, principal, params, query, accepts }) => {
  const call = await findCall(app.db, principal, params.call_id);
  const format = query.format ?? (accepts(['application/json', 'text/vtt']) === 'text/vtt' ? 'vtt' : 'json');
  if (format === 'json') return { status: 200, body: await transcriptPage(app.db, call, query.after ?? 0, query.limit ?? 100) };
  const text = await renderTranscript(app.db, call, format, query.side);
  return { status: 200, binary: { contentType: `${RENDERED[format]}; charset=utf-8`, data: Buffer.from(text), cacheControl: 'no-store' } };
});
