/**
 * Which pixel fetches are not a person reading the message (the way SendGrid flags
 * `sg_machine_open`). Such opens are recorded and counted in the raw figures, and flagged,
 * so "opens (excluding automated)" leaves them out.
 */

/** Fetches this soon after delivery come from the receiving side's machinery, not a reader. */
export const AUTOMATED_OPEN_WINDOW_MS = 10_000;

/** Agents that fetch images by themselves: security scanners, link checkers, HTTP libraries. */
const SCANNERS = /barracuda|mimecast|proofpoint|messagelabs|symantec|trendmicro|forcepoint|sophos|fireeye|ironport|safelinks|bot\b|spider|crawler|scanner|headless|python|curl\/|wget|go-http-client|java\/|okhttp|libwww|node-fetch|axios/i;

/** Image proxies of mail providers: they fetch when the reader opens, and some also right at delivery. */
const PROXIES = /googleimageproxy|ggpht\.com|yahoomailproxy|outlook|ms-office|microsoft office/i;

export interface OpenFetch {
  userAgent: string | undefined;
  /** When the message was accepted by the receiving server (null if unknown). */
  deliveredAt: Date | null;
  at: Date;
}

export function isAutomatedOpen({ userAgent, deliveredAt, at }: OpenFetch): boolean {
  const agent = (userAgent ?? '').trim();
  // Apple Mail Privacy Protection fetches every image through its proxy with the bare agent
  // "Mozilla/5.0" (a real browser always adds more); no agent at all is no mail client either.
  if (agent === '' || agent === 'Mozilla/5.0') return true;
  if (SCANNERS.test(agent)) return true;
  // A provider's proxy right after delivery is its prefetch; later it stands for a reader.
  const soon = deliveredAt !== null && at.getTime() - deliveredAt.getTime() < AUTOMATED_OPEN_WINDOW_MS;
  return soon && PROXIES.test(agent);
}
