// Money is held as integer micro-units of the currency; the API shows plain numbers with 6 decimals.

export const toMicros = (amount: number): number => Math.round(amount * 1_000_000);
export const fromMicros = (micros: number): number => micros / 1_000_000;
export const fromNullableMicros = (micros: number | null): number | null => (micros === null ? null : fromMicros(micros));
