import { defineHandler } from '../../src/http/handler.js';
import { translateTexts } from '../../src/translation/translateTexts.js';

export default defineHandler<'translate'>(async ({ app, principal, body, requestRef }) => ({
  status: 200,
  body: await translateTexts(app, principal, body, requestRef),
}));
