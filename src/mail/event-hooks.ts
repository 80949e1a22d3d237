import type { EventsService } from '../services/events';
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
