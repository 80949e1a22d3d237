import type { Knex } from 'knex';

/**
 * Each recipient's own time zone. `contacts.time_zone` is the IANA zone a contact was given
 * (null: derived when needed). `countries.time_zone` and `states.time_zone` are reference data
 * the time-zone seed fills: a country's zone, and for a country that spans several zones each
 * state's, so a send can read every recipient's zone in the same SQL that lists them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contacts', (t) => {
    t.string('time_zone', 64).nullable();
  });
  await knex.schema.alterTable('countries', (t) => {
    t.string('time_zone', 64).nullable();
  });
  await knex.schema.alterTable('states', (t) => {
    t.string('time_zone', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('states', (t) => t.dropColumn('time_zone'));
  await knex.schema.alterTable('countries', (t) => t.dropColumn('time_zone'));
  await knex.schema.alterTable('contacts', (t) => t.dropColumn('time_zone'));
}
