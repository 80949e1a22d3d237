import type { Knex } from 'knex';
import { reserveMailSlot } from '../../../db/rate-limits';

/**
 * MAIL_RATE: at most `perSecond` messages per second for each account, spaced evenly, across
 * every worker process: each message reserves the account's next slot in the database
 * (`mail_rate_slots`), so two workers share the rate instead of each sending at it.
 */
export class AccountRateLimiter {
  constructor(
    private readonly db: Knex,
    private readonly perSecond: number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  async take(userId: number): Promise<void> {
    if (this.perSecond <= 0) return;
    const wait = await reserveMailSlot(this.db, userId, 1000 / this.perSecond);
    if (wait > 0) await this.sleep(wait);
  }
}
