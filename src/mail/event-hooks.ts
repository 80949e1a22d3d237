import { NotFoundError } from '../lib/errors';
import type { EventsService } from '../services/delivery/events';
import type { Services } from '../services';
import type { WorkerHooks } from './worker';

/** What the worker notices, turned into notification mail. */
export function eventHooks(events: EventsService): WorkerHooks {
  return {
    singleSendStarted: async (send, trx) => void (await events.singleSendStarted(send.userId, send, trx)),
    singleSendCompleted: async (sendId, trx) => void (await events.singleSendCompleted(sendId, trx)),
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
