// Chat messages as this process presented them, serialised (JSON as UTF-8 bytes), per view and message
// id: what a page of messages answers again while the page still holds them (./messagePages.ts).
import { LRUCache } from 'lru-cache';

/** Where a voice message's recording is played back: each side through its own authenticated path. */
export type AudioPathFor = (message: { id: number; session_id: string }) => string;

/** At most this many bytes of presented messages are kept per view, and as many of pages. */
export const KEPT_BYTES_PER_VIEW = 8 * 1024 * 1024;

/** A page as it was last answered: which messages it held (in order; they and its key's `after` make its cursor), and its bytes. */
export interface AnsweredPage {
  ids: readonly number[];
  bytes: Buffer;
}

/** What one view keeps: each message, and the page of a session it answered last, keyed by `pageKey`. */
export interface PresentedView {
  messages: LRUCache<string, Buffer>;
  pages: LRUCache<string, AnsweredPage>;
}

/**
 * One cache per view (a message presents with the audio paths of the side that reads it), keyed by
 * `messageKey`: the session is part of the key, so that not even a database restored under a running
 * server (message ids handed out again) could answer one session's text in another's page.
 */
export class PresentedMessages {
  private readonly views = new Map<AudioPathFor, PresentedView>();

  view(audioPath: AudioPathFor): PresentedView {
    let kept = this.views.get(audioPath);
    if (!kept) {
      kept = {
        messages: new LRUCache<string, Buffer>({ maxSize: KEPT_BYTES_PER_VIEW, sizeCalculation: (bytes) => bytes.length }),
        pages: new LRUCache<string, AnsweredPage>({ maxSize: KEPT_BYTES_PER_VIEW, sizeCalculation: (page) => page.bytes.length }),
      };
      this.views.set(audioPath, kept);
    }
    return kept;
  }
}

export const messageKey = (sessionId: string, messageId: number) => `${sessionId}/${messageId}`;
/** A session's page as a client polls it: the same `after` and `limit` each time. */
export const pageKey = (sessionId: string, after: number, limit: number) => `${sessionId}/${after}/${limit}`;
