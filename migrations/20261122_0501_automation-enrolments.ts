import type { Knex } from 'knex';

/**
 * Who is enrolled in which automation and how far they got. A welcome automation records the
 * target's members at go-live as `skipped`, so that only later joiners receive it;
 * a custom one enrols them. States are ENROLMENT_STATE in src/lib/constants.ts.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('automation_enrolments', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('automation_id').notNullable().references('id').inTable('automations').onDelete('CASCADE');
    t.integer('contact_id').nullable();
    t.integer('segment_recipient_id').nullable();
    t.string('email', 320).notNullable();
    t.string('email_key', 320).notNullable();
    t.smallint('state').notNullable();
    // The last schedule queued for this contact (schedules run in id order).
    t.integer('last_schedule_id').nullable();
    instant(t, 'last_step_at').nullable();
    // When the next schedule is due; null when there is none (yet).
    instant(t, 'next_due_at').nullable();
    instant(t, 'enrolled_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.unique(['automation_id', 'email_key']);
    t.index(['automation_id', 'state', 'next_due_at']);
  });

  // What the engine last saw of each automation: its status (for go-live and pause events).
  await knex.schema.createTable('automation_runs', (t) => {
    t.integer('automation_id').primary().references('id').inTable('automations').onDelete('CASCADE');
    t.smallint('seen_status').notNullable();
    instant(t, 'first_live_at').nullable();
    instant(t, 'updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('automation_runs');
  await knex.schema.dropTableIfExists('automation_enrolments');
}
