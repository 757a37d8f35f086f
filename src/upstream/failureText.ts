// Pieces of the messages that say how an upstream failed (engine errors, 502 details, logs).

/** `30 s`, `0.2 s`: durations in messages. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

export function attempts(count: number): string {
  return count === 1 ? '1 attempt' : `${count} attempts`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Cut an upstream message so a huge HTML error page does not end up in logs and API answers. */
export function shorten(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
