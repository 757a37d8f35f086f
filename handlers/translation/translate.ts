import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { translateTexts } from '../../src/translation/translateTexts.js';

export default defineHandler<'translate'>(async ({ app, principal, body, requestRef }) => ({
  status: 200,
  body: await translateTexts(app, requirePrincipal(principal), body, requestRef),
}));
