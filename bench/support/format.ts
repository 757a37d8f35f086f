// How the benchmarks print numbers and tables (pure: the unit tests check the text).
import type { Spread } from './stats.js';

/** A number with a fixed count of decimals and thousands separators: 12345.6 -> "12,345.6". */
export function num(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** "median (min-max)", or the median alone when there was one repetition. */
export function withSpread(s: Spread, decimals = 0): string {
  if (s.count <= 1 || s.min === s.max) return num(s.median, decimals);
  return `${num(s.median, decimals)} (${num(s.min, decimals)}-${num(s.max, decimals)})`;
}

export const mib = (bytes: number) => `${num(bytes / 1024 / 1024)} MiB`;

/** A text table: the first row is the header, columns after the first are right-aligned. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  const line = (row: readonly string[]) =>
    row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  ').trimEnd();
  const [header, ...body] = rows;
  return [line(header!), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
