import type { Knex } from 'knex';

/**
 * Click tracking, honest opens and tracking switches (issue 13).
 * - `send_links`: the tracked links of a send or automation step, stored once (not per
 *   message); link n of a send redirects only to its stored `url`, with its own counters.
 * - `link_clicks`: one row per (link, message) that was clicked, for unique clicks per link.
 * - `send_messages.clicked_at` (first click) and `human_opened_at` (first open not made by a
 *   known proxy or scanner); `opened_at` stays the first open of any kind.
 * - Counters beside the reference's statistics, and the open/click tracking switches of the
 *   account (defaults), each single send and each automation step.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  const switches = (t: Knex.CreateTableBuilder) => {
    t.smallint('track_opens').notNullable().defaultTo(1);
    t.smallint('track_clicks').notNullable().defaultTo(1);
  };

  await knex.schema.alterTable('accounts', switches);
  await knex.schema.alterTable('automation_schedules', switches);
  await knex.schema.alterTable('single_sends', (t) => {
    switches(t);
    t.integer('unique_clicks').notNullable().defaultTo(0);
    t.integer('total_clicks').notNullable().defaultTo(0);
    t.integer('unique_human_opens').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('automations', (t) => {
    t.integer('total_unique_clicks').notNullable().defaultTo(0);
    t.integer('total_clicks').notNullable().defaultTo(0);
    t.integer('total_unique_human_opens').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('send_messages', (t) => {
    instant(t, 'human_opened_at').nullable();
    instant(t, 'clicked_at').nullable();
  });

  await knex.schema.createTable('send_links', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('single_send_id').nullable().references('id').inTable('single_sends').onDelete('CASCADE');
    t.integer('automation_id').nullable().references('id').inTable('automations').onDelete('CASCADE');
    t.integer('automation_schedule_id').nullable().references('id').inTable('automation_schedules').onDelete('CASCADE');
    t.integer('n').notNullable();
    t.text('url').notNullable();
    t.integer('unique_clicks').notNullable().defaultTo(0);
    t.integer('total_clicks').notNullable().defaultTo(0);
    instant(t, 'created_at').notNullable();
    // NULLs are distinct in both databases: a send's links and a step's links never collide.
    t.unique(['single_send_id', 'n']);
    t.unique(['automation_schedule_id', 'n']);
    t.index(['automation_id']);
  });

  await knex.schema.createTable('link_clicks', (t) => {
    t.integer('link_id').notNullable().references('id').inTable('send_links').onDelete('CASCADE');
    t.bigInteger('message_id').notNullable().references('id').inTable('send_messages').onDelete('CASCADE');
    t.integer('clicks').notNullable();
    instant(t, 'first_at').notNullable();
    instant(t, 'last_at').notNullable();
    t.primary(['link_id', 'message_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('link_clicks');
  await knex.schema.dropTableIfExists('send_links');
  await knex.schema.alterTable('send_messages', (t) => t.dropColumns('human_opened_at', 'clicked_at'));
  await knex.schema.alterTable('automations', (t) => t.dropColumns('total_unique_clicks', 'total_clicks', 'total_unique_human_opens'));
  await knex.schema.alterTable('single_sends', (t) => t.dropColumns('track_opens', 'track_clicks', 'unique_clicks', 'total_clicks', 'unique_human_opens'));
  await knex.schema.alterTable('automation_schedules', (t) => t.dropColumns('track_opens', 'track_clicks'));
  await knex.schema.alterTable('accounts', (t) => t.dropColumns('track_opens', 'track_clicks'));
}
