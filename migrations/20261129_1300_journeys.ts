import type { Knex } from 'knex';

/**
 * Journeys (docs/journeys.md): an automation may carry a graph of nodes instead of a chain of
 * steps. Each save of it is a version (`journey_versions`, kept for its report once nobody is in
 * it). An enrolment in such an automation stores where it stands: its version, its node, when
 * that node is due (`next_due_at`, as for chains), and what a wait waits for (`waits_for`,
 * `opened:<node>` or `clicked:<node>`, so the open or click itself wakes it) until when
 * (`timeout_at`). `journey_visits` has one row per node a contact passed, written as it leaves
 * with how it left (`outcome`), for the report; an email node's ledger row names its visit
 * (`send_messages.journey_visit_id`, unique: a node queues its mail once per visit).
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('journey_versions', (t) => {
    t.increments('id');
    t.integer('automation_id').notNullable().references('id').inTable('automations').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('graph').notNullable();
    t.string('created_by', 320).nullable();
    instant(t, 'created_at').notNullable();
    t.unique(['automation_id', 'version']);
  });

  await knex.schema.alterTable('automation_enrolments', (t) => {
    t.integer('journey_version_id').nullable();
    t.string('node_id', 40).nullable();
    // When the contact came to its node (its visit row is written when it leaves).
    instant(t, 'node_entered_at').nullable();
    t.string('waits_for', 60).nullable();
    instant(t, 'timeout_at').nullable();
  });

  await knex.schema.createTable('journey_visits', (t) => {
    t.bigIncrements('id');
    t.integer('enrolment_id').notNullable().references('id').inTable('automation_enrolments').onDelete('CASCADE');
    t.integer('version_id').notNullable().references('id').inTable('journey_versions').onDelete('CASCADE');
    t.string('node_id', 40).notNullable();
    // How the contact left the node: done, yes, no, a split's branch number, or failed.
    t.string('outcome', 12).nullable();
    instant(t, 'entered_at').notNullable();
    instant(t, 'left_at').notNullable();
    // A webhook step's event in the outgoing webhooks' outbox: its delivery failing counts in the report.
    t.string('hook_event_id', 64).nullable();
    t.index(['version_id', 'node_id']);
    t.index(['enrolment_id', 'node_id']);
  });

  await knex.schema.alterTable('send_messages', (t) => {
    t.bigInteger('journey_visit_id').nullable();
  });
  await knex.raw('create unique index send_messages_visit_once on send_messages (journey_visit_id) where journey_visit_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists send_messages_visit_once');
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('journey_visit_id'));
  await knex.schema.dropTableIfExists('journey_visits');
  await knex.schema.alterTable('automation_enrolments', (t) => t.dropColumns('journey_version_id', 'node_id', 'node_entered_at', 'waits_for', 'timeout_at'));
  await knex.schema.dropTableIfExists('journey_versions');
}
