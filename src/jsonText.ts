/**
 * JSON already written as text, typed by the value it encodes: a service that keeps the parts of an
 * answer serialised (src/sessions/messagePages.ts) hands the router text it writes as it is, instead of
 * objects it would parse and stringify again.
 */
export class JsonText<T> {
  /** Only the type: which value the text encodes. */
  declare private readonly encodes: T;

  constructor(readonly text: string) {}
}
