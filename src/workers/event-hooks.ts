import type { Knex } from 'knex';
import { NotFoundError } from '../lib/errors';
import type { EventsService } from '../services/delivery/notices';
import type { Services } from '../services';
import type { WorkerHooks } from './send-worker';
import { checkSendRates } from '../services/delivery/notices';
import type { AutomationRow } from '../services/campaigns/enrolment';
import { emitHookEvents } from '../services/integrations/hook-outbox';
import type { HookEventType } from '../lib/constants';
import { recordAudit } from '../services/shared/audit-writer';
import { SYSTEM_ACTOR } from '../services/context';
import { providerLabel } from '../services/delivery/providers';

/** What the worker notices, turned into notification mail and outgoing webhook events (in the same transaction). */
export function eventHooks(events: EventsService): WorkerHooks {
  return {
    singleSendStarted: async (send, trx) => {
      await events.singleSendStarted(send.userId, send, trx);
      await singleSendEvent(trx, 'single_send.started', send.id);
    },
    singleSendCompleted: async (sendId, trx) => {
      await events.singleSendCompleted(sendId, trx);
      await singleSendEvent(trx, 'single_send.completed', sendId);
      // Synchronous 5xx bounces count in the rate too: checked once the send is done.
      await checkSendRates(trx, sendId, new Date().toISOString(), async (alert) => void (await events.sendRateAlert(alert, trx)));
    },
    singleSendRefusedUnauthenticated: async (send, trx) => {
      await events.sendPausedUnauthenticated(send, trx);
      const utr = await trx('single_sends').where({ id: send.id }).first('utr');
      await recordAudit(trx, { userId: send.userId, actor: SYSTEM_ACTOR }, {
        action: 'single_send.paused', recordType: 'single_send', recordId: utr ? String(utr.utr) : send.id, summary: `${send.name}: paused at its start, ${send.fromEmail} is not in a verified sending domain`,
      });
    },
    automationRefusedUnauthenticated: async (a, fromEmails, trx) => {
      await events.automationPausedUnauthenticated({ userId: Number(a.user_id), name: a.automation_name, fromEmails }, trx);
      await automationEvent(trx, 'automation.paused', a);
      await recordAudit(trx, { userId: Number(a.user_id), actor: SYSTEM_ACTOR }, {
        action: 'automation.paused', recordType: 'automation', recordId: String(a.utr), summary: `${a.automation_name}: paused, ${fromEmails.join(', ')} not in a verified sending domain`,
      });
    },
    sendPausedForPolicy: async (pause, trx) => {
      await events.sendPausedForPolicy(pause, trx);
    },
    providerPaused: async (pause, trx) => {
      await events.providerPaused({ ...pause, providerName: providerLabel(pause.provider) }, trx);
      await recordAudit(trx, { userId: pause.userId, actor: SYSTEM_ACTOR }, {
        action: 'sending_domain.provider_paused', recordType: 'sending_domain', recordId: pause.sendingDomainId, summary: `${pause.domain}: mail to ${providerLabel(pause.provider)} paused by the complaint and bounce guard`,
      });
    },
    sendPausedForTemplateErrors: async (pause, trx) => {
      await events.sendPausedForTemplateErrors(pause, trx);
    },
    automationLive: async (a, trx) => {
      await events.automationLive(Number(a.user_id), a.automation_name, trx);
      await automationEvent(trx, 'automation.live', a);
    },
    automationPaused: async (a, trx) => {
      await events.automationPaused(Number(a.user_id), a.automation_name, trx);
      await automationEvent(trx, 'automation.paused', a);
    },
  };
}

/** single_send.started / completed: the send's utr, name and counters at that moment. */
async function singleSendEvent(trx: Knex, type: HookEventType, sendId: number): Promise<void> {
  const send = await trx('single_sends').where({ id: sendId }).first('user_id', 'utr', 'single_send_name', 'triggered', 'delivered', 'bounces', 'failed');
  if (!send) return;
  const userId = Number(send.user_id);
  const data = {
    single_send_utr: String(send.utr),
    single_send_name: String(send.single_send_name),
    triggered: Number(send.triggered),
    ...(type === 'single_send.completed' ? { delivered: Number(send.delivered), bounces: Number(send.bounces), failed: Number(send.failed) } : {}),
  };
  await emitHookEvents(trx, type, [userId], () => [{ userId, data }]);
}

/** automation.live / paused, as the worker notices the change of status. */
async function automationEvent(trx: Knex, type: HookEventType, a: AutomationRow): Promise<void> {
  const userId = Number(a.user_id);
  const data = { automation_utr: String(a.utr), automation_name: a.automation_name, automation_type: Number(a.automation_type) };
  await emitHookEvents(trx, type, [userId], () => [{ userId, data }]);
}

/** Everything the worker calls back into the services for. */
export function workerHooks(services: Services): WorkerHooks {
  return { ...eventHooks(services.events), ...segmentRefreshHook(services.segments) };
}

/** Segment rules are refreshed before every send (docs/segments.md, "How rules are kept current"); a deleted segment has no members to refresh. */
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
