// What billable work costs, from the paying organization's rates. Rounded once, to whole micro-units.
import type { OrganizationRow } from '../db/organizations.js';

/** What a ledger charge pays for: characters translated, seconds of a voice message, seconds of a call. */
export type UsageKind = 'text' | 'voice_message' | 'call';

export type Rates = Pick<OrganizationRow, 'text_rate_micros' | 'voice_rate_micros'>;

/** Text: characters times the rate per million characters. */
export const textCostMicros = (rates: Rates, characters: number) =>
  Math.round((characters * rates.text_rate_micros) / 1_000_000);

/** Voice (messages and calls): seconds at the per-minute rate. */
export const voiceCostMicros = (rates: Rates, seconds: number) => Math.round((seconds * rates.voice_rate_micros) / 60);

export const costMicros = (rates: Rates, kind: UsageKind, quantity: number) =>
  kind === 'text' ? textCostMicros(rates, quantity) : voiceCostMicros(rates, quantity);

type Balance = Pick<OrganizationRow, 'balance_micros' | 'held_micros'>;

/** What new work may still spend: the balance less what running requests hold; null when invoiced. */
export const availableMicros = (org: Balance): number | null =>
  org.balance_micros === null ? null : org.balance_micros - org.held_micros;

/** A prepaid organization with nothing left to spend: live billable work is refused (402). */
export const balanceRunOut = (org: Balance) => {
  const available = availableMicros(org);
  return available !== null && available <= 0;
};

/**
 * How many milliseconds of call interpretation the available balance pays for; null when nothing
 * limits it (invoiced, or a free rate).
 */
export function fundedCallMs(org: Balance & Rates): number | null {
  const available = availableMicros(org);
  const perSecond = voiceCostMicros(org, 1);
  if (available === null || perSecond <= 0) return null;
  return Math.ceil((Math.max(available, 0) * 1000) / perSecond);
}
