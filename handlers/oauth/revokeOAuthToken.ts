import { defineHandler, notImplemented } from '../../src/http/handler.js';

export default defineHandler<'revokeOAuthToken'>(notImplemented('revokeOAuthToken'));
