import { notImplemented } from '../../src/http/handler.js';

export default notImplemented('postChatVoiceMessage');
