import { isAutomatedOpen } from '../../src/lib/automated-opens';

const delivered = new Date('2026-11-22T09:00:00.000Z');
const after = (ms: number) => new Date(delivered.getTime() + ms);
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';

describe('automated opens', () => {
  test('when Apple Mail Privacy Protection, a scanner or no agent fetches the pixel then the open is automated at any time', () => {
    for (const userAgent of ['Mozilla/5.0', 'Mozilla/5.0 (compatible; Barracuda Sentinel)', 'python-requests/2.32', '', undefined]) {
      expect(isAutomatedOpen({ userAgent, deliveredAt: delivered, at: after(3 * 86_400_000) })).toBe(true);
    }
  });

  test('when a mail provider proxy fetches within seconds of delivery then it is automated, and later it is a reader', () => {
    expect(isAutomatedOpen({ userAgent: GMAIL, deliveredAt: delivered, at: after(2_000) })).toBe(true);
    expect(isAutomatedOpen({ userAgent: GMAIL, deliveredAt: delivered, at: after(600_000) })).toBe(false);
    expect(isAutomatedOpen({ userAgent: GMAIL, deliveredAt: null, at: after(2_000) })).toBe(false);
  });

  test('when a mail program fetches the pixel then it is a reader, even right after delivery', () => {
    expect(isAutomatedOpen({ userAgent: SAFARI, deliveredAt: delivered, at: after(1_000) })).toBe(false);
  });
});
