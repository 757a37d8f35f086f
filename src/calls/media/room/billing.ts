// A live call's money: the meter's decisions carried out through the money module, one charge at a
// time, and the balance asked before interpretation starts or resumes. Says "run out" and "topped up";
// what that means for the call's audio is the room's business.
import type { Logger } from 'pino';
import type { Payer } from '../../../auth/principal.js';
import type { CallFunding } from '../../../money/index.js';
import type { Funding } from '../callStore.js';
import { CallMeter, type MeterCharge } from './meter.js';

export interface BillingDeps {
  funding: Funding;
  payer: Payer;
  callId: string;
  intervalMs(): number;
  /** The media plane's clock. */
  now(): number;
  /** Background work the plane waits for on shutdown. */
  track(work: Promise<unknown>): void;
  log: Logger;
  /** A charge found the prepaid balance spent. */
  onRunOut(): void;
}

/** Whether interpretation may start: funded, not funded, or the balance could not be read. */
export type Admission = 'funded' | 'run_out' | 'unknown';

export class CallBilling {
  private readonly meter: CallMeter;
  /** Charges run one after another, in order. */
  private charges: Promise<void> = Promise.resolve();
  private checkingFunding = false;
  private closed = false;

  constructor(private readonly deps: BillingDeps) {
    this.meter = new CallMeter(deps.now(), deps.intervalMs);
  }

  /** Interpretation started or stopped in at least one direction. */
  interpreting(running: boolean): void {
    this.meter.setRunning(running, this.deps.now());
  }

  /** Asks the balance before a direction starts interpreting; learns what it pays for. */
  async admit(): Promise<Admission> {
    try {
      return this.adopt(await this.deps.funding.funding(this.deps.payer)) ? 'funded' : 'run_out';
    } catch (err) {
      this.deps.log.error({ err }, 'media: could not check the balance before interpreting');
      return 'unknown';
    }
  }

  /** Charges what is due now. */
  tick(): void {
    const charge = this.meter.tick(this.deps.now());
    if (charge) this.charge(charge);
  }

  /** Charges everything interpreted so far, the started second included. */
  settle(): void {
    const charge = this.meter.settle(this.deps.now());
    if (charge) this.charge(charge);
  }

  /**
   * While interpretation is stopped for want of money: once per interval, asks whether the balance was
   * topped up; `onFunded` runs when it was.
   */
  checkFunding(onFunded: () => void): void {
    if (this.checkingFunding || !this.meter.fundingCheckDue(this.deps.now())) return;
    this.checkingFunding = true;
    this.deps.track(
      this.deps.funding.funding(this.deps.payer)
        .then((funding) => {
          if (!this.closed && this.adopt(funding)) onFunded();
        })
        .catch((err) => this.deps.log.warn({ err }, 'media: could not check the balance'))
        .finally(() => {
          this.checkingFunding = false;
        }),
    );
  }

  /** The call's media is gone: a charge that fails from now on is lost rather than charged twice. */
  close(): void {
    this.settle();
    this.closed = true;
  }

  private adopt(funding: CallFunding): boolean {
    if (funding.runOut) return false;
    this.meter.fund(funding.fundedMs, this.deps.now());
    return true;
  }

  private charge(charge: MeterCharge): void {
    const { funding: ledger, payer, callId, log } = this.deps;
    this.charges = this.charges.then(async () => {
      try {
        const funding = await ledger.charge(payer, callId, charge.seconds);
        if (this.closed) return;
        if (!this.adopt(funding)) this.deps.onRunOut();
      } catch (err) {
        log.error({ err, seconds: charge.seconds }, 'media: charging interpretation time failed');
        if (!this.closed) this.meter.refund(charge);
      }
    });
    this.deps.track(this.charges);
  }
}
