// An interpreter that cannot work: it reports `failed` with a message (once, after the factory has
// returned, unless closed first) and ignores audio. Live calls then stay up untranslated and the
// listener is told why.

import type { Interpreter, InterpreterFactory, InterpreterOptions } from '../calls/media/interpreter.js';

export function failedInterpreter(options: InterpreterOptions, message: string): Interpreter {
  let closed = false;
  queueMicrotask(() => {
    if (closed) return;
    try {
      options.onStatus({ state: 'failed', message });
    } catch {
      // The media plane's callback failing changes nothing here.
    }
  });
  return {
    push() {},
    async close() {
      closed = true;
    },
  };
}

/** A factory whose every interpreter fails with `message` (e.g. the setting a live call is missing). */
export const failingInterpreterFactory =
  (message: string): InterpreterFactory =>
  (options) =>
    failedInterpreter(options, message);
