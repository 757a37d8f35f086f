/**
 * JSON already serialised (UTF-8 bytes), typed by the value it encodes: a service that keeps the parts
 * of an answer serialised (src/sessions/messagePages.ts) hands the router bytes it writes as they are,
 * instead of objects it would stringify and encode again.
 */
export class SerializedJson<T> {
  /** Only the type: which value the bytes encode. */
  declare private readonly encodes: T;

  constructor(readonly bytes: Buffer) {}
}
