import type { Knex } from 'knex';
import { MESSAGE_STATE } from '../src/lib/constants';

/** Data only: counts the messages that failed before the counters existed (0610). */
export async function up(knex: Knex): Promise<void> {
  const failed = (column: 'single_send_id' | 'automation_id', table: string) =>
    knex('send_messages')
      .count('*')
      .where('state', MESSAGE_STATE.failed)
      .where(column, knex.ref(`${table}.id`));
  await knex('single_sends').update({ failed: failed('single_send_id', 'single_sends') });
  await knex('automations').update({ total_failed: failed('automation_id', 'automations') });
}

export async function down(): Promise<void> {
  // The counters are dropped by 0610's down.
}
