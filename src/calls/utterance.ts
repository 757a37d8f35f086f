// A completed turn of a side's speech, as the media plane hands it over for the call's transcript
// (./transcripts.ts stores it; ./media/callStore.ts is the port it travels through).
import type { Side } from './side.js';

export interface Utterance {
  speaker: Side;
  language: string;
  /** What the speaker said. */
  text: string;
  /** What the other side heard. */
  translation: { language: string; text: string };
  /** The media plane's clock (ms since the epoch). */
  startedAt: number;
  endedAt: number;
}
