import type { Knex } from 'knex';
import { newUtr } from '../../lib/utr';

/** What a copy of a schedule keeps (an automation's duplicate copies its schedules). */
const COPIED = ['user_id', 'sender_id', 'subject', 'waiting_period', 'waiting_type', 'template_id', 'preview_img', 'template_json', 'template_html', 'track_opens', 'track_clicks'] as const;

/** Copies every schedule of one automation to another, in order, with new utrs. */
export async function copySchedules(trx: Knex.Transaction, fromAutomationId: number, toAutomationId: number, now: string): Promise<void> {
  const schedules = await trx('automation_schedules').where({ automation_id: fromAutomationId }).orderBy('id');
  for (const schedule of schedules) {
    await trx('automation_schedules').insert({
      ...Object.fromEntries(COPIED.map((name) => [name, schedule[name]])),
      automation_id: toAutomationId,
      utr: newUtr(),
      created_at: now,
      updated_at: now,
    });
  }
}
