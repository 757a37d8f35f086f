// Live interpretation over OpenAI's realtime WebSocket APIs: one upstream session per direction.
//
// - Targets the dedicated translation model speaks (../languages.ts) go to
//   `<realtimeUrl>/translations?model=<translationModel>` (./translationWire.ts).
// - Other targets go to the general realtime API, `<realtimeUrl>?model=<realtimeModel>`, instructed to
//   interpret (./realtimeWire.ts).
// The `openai` SDK's realtime client always uses wss:// and has no translation client, so this talks
// to the endpoints with `ws` directly (a local stand-in can then use ws://).
//
// Layout: ./translationEvents.ts and ./realtimeEvents.ts type the wire; ./translationWire.ts and
// ./realtimeWire.ts speak it; ./interpreter.ts frames audio and reports status over a reconnecting
// socket (../../upstream/reconnectingSocket.ts); ./settings.ts holds the options and their defaults.

import type { InterpreterFactory } from '../../calls/media/interpreter.js';
import { errorMessage } from '../../upstream/failureText.js';
import { failedInterpreter } from '../failedInterpreter.js';
import { OpenAiRealtimeInterpreter } from './interpreter.js';
import { resolveSettings, type OpenAiInterpreterFactoryOptions } from './settings.js';

export { openAiInterpreterRoute } from './interpreter.js';
export { interpreterInstructions } from './realtimeWire.js';
export {
  DEFAULT_REALTIME_MODEL,
  DEFAULT_TRANSLATION_MODEL,
  type InterpreterLogger,
  type InterpreterLogLevel,
  type OpenAiInterpreterFactoryOptions,
  type ReconnectOptions,
} from './settings.js';

export function createOpenAiInterpreterFactory(opts: OpenAiInterpreterFactoryOptions): InterpreterFactory {
  const settings = resolveSettings(opts);
  return (options) => {
    try {
      return new OpenAiRealtimeInterpreter(settings, options);
    } catch (err) {
      // Never throw from the factory: report failure instead.
      const message = `live interpretation could not start: ${errorMessage(err)}`;
      settings.logger('error', message);
      return failedInterpreter(options, message);
    }
  };
}
