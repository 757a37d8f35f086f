// The server's logger: pino, with every line scrubbed of secrets on its way out.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config.js';
import { secretScrubber } from './redact.js';

export interface LoggerOptions {
  level: string;
  /** Literal secrets without a recognisable shape (an operator-chosen admin token, engine keys). */
  secrets?: Array<string | undefined>;
}

/** Every logger of the server comes from here, so no line leaves without the scrub. */
export function createLogger(options: LoggerOptions, destination?: DestinationStream): Logger {
  const scrub = secretScrubber(options.secrets);
  const settings = { level: options.level, hooks: { streamWrite: scrub } };
  return destination ? pino(settings, destination) : pino(settings);
}

/**
 * The logger for `config`: its level, and the configured secrets scrubbed. By default it writes to
 * stdout without blocking: a request's log line is queued and written by the next free write instead of
 * the request waiting for the write (pino flushes what is queued when the process exits).
 */
export function loggerFor(config: Config, destination: DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  const { openai, deepl, libreTranslate } = config.engines;
  return createLogger(
    {
      level: config.logLevel,
      secrets: [config.adminToken, openai.apiKey, deepl.apiKey, libreTranslate.apiKey],
    },
    destination,
  );
}

