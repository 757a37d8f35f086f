import { defineHandler, notImplemented } from '../../src/http/handler.js';

export default defineHandler<'createOAuthToken'>(notImplemented('createOAuthToken'));
