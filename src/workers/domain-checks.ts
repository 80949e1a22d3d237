import type { Logger } from 'pino';
import type { SendingDomainsService } from '../services/accounts/sending-domains';
import { periodic } from './periodic';

/** How often the worker looks for domains due a check; each is checked once a day (DOMAIN_RECHECK_MS). */
const INTERVAL_MS = 3600_000;

export interface DomainCheckJob {
  /** One look now: checks every domain due; answers how many were checked. */
  runOnce(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The worker's daily DNS check of verified (and failing) sending domains: a verified domain
 * whose records went is marked failing and its account's notification recipients are told.
 * Several workers may run it at once: a status moves once (the service guards it).
 */
export function createDomainCheckJob(
  { sendingDomains, logger }: { sendingDomains: Pick<SendingDomainsService, 'recheckDue'>; logger: Logger },
  /** now: the clock (tests move it instead of waiting). */
  options: { intervalMs?: number; now?: () => Date } = {},
): DomainCheckJob {
  const now = options.now ?? (() => new Date());
  const run = () => sendingDomains.recheckDue(now(), (err, domain) => logger.warn({ err, domain }, 'sending domain check failed; trying again at the next run'));
  const loop = periodic(run, options.intervalMs ?? INTERVAL_MS, (err) => logger.error({ err }, 'sending domain checks failed; trying again at the next run'));
  return { runOnce: run, ...loop };
}
