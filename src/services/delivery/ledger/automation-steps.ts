import type { Knex } from 'knex';
import { insertSelect } from '../../../db/insert-select';
import { typedParam } from '../../../db/typed-param';
import { MESSAGE_KIND, MESSAGE_STATE } from '../../../lib/constants';
import { moveCounters } from './counters';

/** Where the enrolments (and, for a journey, the visits) are in the query an automation step is queued from. */
export interface StepSource {
  /** The enrolments' table or alias in `query`. */
  enrolments: string;
  /** The journey visits' alias: each visit of an email node gets the mail, named by its visit, not its enrolment. */
  visits?: string;
}

/**
 * The one writer of automation steps' ledger rows: queues step `scheduleId` for each row `query`
 * selects, in one statement however many, and moves the automation's triggered counter by as
 * many. A chain's row names its enrolment and a journey's its visit (a journey may pass a node
 * again); the ledger's unique (step, enrolment) and visit indexes make a repeat harmless.
 */
export async function queueAutomationStep(trx: Knex.Transaction, automationId: number, scheduleId: number, query: Knex.QueryBuilder, from: StepSource, at: string): Promise<number> {
  const column = (name: string) => `${from.enrolments}.${name}`;
  const inserted = await insertSelect(trx, 'send_messages', {
    user_id: column('user_id'),
    kind: typedParam(trx, MESSAGE_KIND.automation, 'smallint'),
    automation_id: column('automation_id'),
    automation_schedule_id: typedParam(trx, scheduleId, 'integer'),
    ...(from.visits ? { journey_visit_id: `${from.visits}.id` } : { enrolment_id: column('id') }),
    contact_id: column('contact_id'),
    segment_recipient_id: column('segment_recipient_id'),
    email: column('email'),
    email_key: column('email_key'),
    state: typedParam(trx, MESSAGE_STATE.queued, 'smallint'),
    available_at: typedParam(trx, at, 'timestamptz'),
    created_at: typedParam(trx, at, 'timestamptz'),
    updated_at: typedParam(trx, at, 'timestamptz'),
  }, query);
  if (inserted) await moveCounters(trx, { single_send_id: null, automation_id: automationId }, { triggered: inserted });
  return inserted;
}
