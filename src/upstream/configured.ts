// An upstream engine chosen from configuration, or the setting that is missing for one.
import { errors } from '../errors.js';

export interface MissingSetting {
  missingSetting: string;
}

export type Configured<Engine> = Engine | MissingSetting;

/** The engine live work needs; without one, a 502 that names the setting to add. */
export function requireConfigured<Engine extends object>(engine: Configured<Engine>, job: string): Engine {
  if ('missingSetting' in engine) {
    throw errors.upstream(`no ${job} engine is configured for live mode: set ${engine.missingSetting}`);
  }
  return engine;
}
