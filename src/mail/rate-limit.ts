/**
 * MAIL_RATE: at most `perSecond` messages per second for each account, spaced evenly.
 * Applies per worker process (several workers on PostgreSQL each keep their own pace).
 */
export class AccountRateLimiter {
  private readonly next = new Map<number, number>();

  constructor(
    private readonly perSecond: number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  async take(userId: number): Promise<void> {
    if (this.perSecond <= 0) return;
    const now = Date.now();
    const at = Math.max(now, this.next.get(userId) ?? 0);
    this.next.set(userId, at + 1000 / this.perSecond);
    if (at > now) await this.sleep(at - now);
  }
}
