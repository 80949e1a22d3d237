import { NotFoundError } from '../lib/errors';
import type { EventsService } from '../services/delivery/events';
import type { Services } from '../services';
import type { WorkerHooks } from './worker';
import { checkSendRates } from './rate-alerts';

/** What the worker notices, turned into notification mail. */
export function eventHooks(events: EventsService): WorkerHooks {
  return {
    singleSendStarted: async (send, trx) => void (await events.singleSendStarted(send.userId, send, trx)),
    singleSendCompleted: async (sendId, trx) => {
      await events.singleSendCompleted(sendId, trx);
      // Synchronous 5xx bounces count in the rate too: checked once the send is done.
      await checkSendRates(trx, sendId, new Date().toISOString(), async (alert) => void (await events.sendRateAlert(alert, trx)));
    },
    automationLive: async (a, trx) => void (await events.automationLive(Number(a.user_id), a.automation_name, trx)),
    automationPaused: async (a, trx) => void (await events.automationPaused(Number(a.user_id), a.automation_name, trx)),
  };
}

/** Everything the worker calls back into the services for. */
export function workerHooks(services: Services): WorkerHooks {
  return { ...eventHooks(services.events), ...segmentRefreshHook(services.segments) };
}

/** Segment rules are refreshed before every send (decisions.md); a deleted segment has no members to refresh. */
function segmentRefreshHook(segments: Services['segments']): Pick<WorkerHooks, 'refreshSegments'> {
  return {
    async refreshSegments(userId, segmentIds, trx) {
      for (const id of segmentIds) {
        try {
          await segments.refresh({ userId }, id, trx);
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
    },
  };
}
