import type { Knex } from 'knex';

/**
 * The whole domain of the reference in one first migration, so that later work adds
 * columns and tables instead of rewriting these. Runs unchanged on SQLite and PostgreSQL.
 *
 * Conventions: integer flags (never booleans, so both databases return numbers);
 * timestamps with microseconds; email uniqueness through a lower-cased `email_key`
 * column with a unique index (soft-deleted rows excluded by a partial index where
 * the table has `deleted_at`); JSON columns are `jsonb` on PostgreSQL and text on SQLite.
 */

/** Services always write both (as ISO strings); no database default, whose formats differ. */
function timestamps(t: Knex.CreateTableBuilder, nullable = false): void {
  const created = t.timestamp('created_at', { useTz: true, precision: 6 });
  const updated = t.timestamp('updated_at', { useTz: true, precision: 6 });
  if (!nullable) {
    created.notNullable();
    updated.notNullable();
  }
}

function softDelete(t: Knex.CreateTableBuilder): void {
  t.timestamp('deleted_at', { useTz: true, precision: 6 }).nullable();
}

function owner(t: Knex.CreateTableBuilder): void {
  t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
}

export async function up(knex: Knex): Promise<void> {
  const pg = knex.client.config.client === 'pg';
  const json = (t: Knex.CreateTableBuilder, name: string) => (pg ? t.jsonb(name) : t.text(name));

  await knex.schema.createTable('accounts', (t) => {
    t.increments('id');
    t.string('name', 255).notNullable();
    t.string('email', 255).notNullable();
    t.string('email_key', 255).notNullable().unique();
    t.string('password_hash', 255).notNullable();
    t.string('public_key', 64).notNullable().unique();
    t.string('secret_key_hash', 128).notNullable();
    t.string('time_zone', 64).notNullable().defaultTo('UTC');
    timestamps(t);
    softDelete(t);
  });

  // Key/value settings of the installation (for example the generated HMAC secret).
  await knex.schema.createTable('app_settings', (t) => {
    t.string('key', 64).primary();
    t.text('value').notNullable();
  });

  // Dashboard sessions live in the database so several web processes share them.
  await knex.schema.createTable('sessions', (t) => {
    t.string('id', 64).primary();
    t.integer('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('csrf_token', 64).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 6 }).notNullable().index();
    timestamps(t);
  });

  await knex.schema.createTable('countries', (t) => {
    t.integer('id').primary();
    t.string('name', 128).notNullable();
    t.string('iso2', 2).notNullable().unique();
    t.string('phone_code', 32).notNullable();
  });
  await knex.schema.createTable('states', (t) => {
    t.integer('id').primary();
    t.integer('country_id').notNullable().references('id').inTable('countries');
    t.string('name', 128).notNullable();
    t.string('iso2', 16).notNullable();
    t.index(['country_id']);
  });
  await knex.schema.createTable('cities', (t) => {
    t.integer('id').primary();
    t.integer('state_id').notNullable().references('id').inTable('states');
    t.string('name', 128).notNullable();
    t.index(['state_id']);
  });

  await knex.schema.createTable('unsubscribe_groups', (t) => {
    t.increments('id');
    owner(t);
    t.string('rand_id', 32).notNullable();
    t.string('group_name', 255).notNullable();
    t.text('description').notNullable();
    t.integer('is_display').notNullable().defaultTo(0);
    timestamps(t);
    t.index(['user_id']);
  });

  // Global unsubscribers: one address per account.
  await knex.schema.createTable('global_unsubscribes', (t) => {
    t.increments('id');
    owner(t);
    t.integer('unsubscribe_groups_id').nullable();
    t.string('email_address', 320).notNullable();
    t.string('email_key', 320).notNullable();
    timestamps(t);
    t.unique(['user_id', 'email_key']);
  });

  // Recipients of an unsubscribe group: one address per group.
  await knex.schema.createTable('unsubscribe_group_recipients', (t) => {
    t.increments('id');
    owner(t);
    t.integer('unsubscribe_groups_id').notNullable().references('id').inTable('unsubscribe_groups').onDelete('CASCADE');
    t.string('email_address', 320).notNullable();
    t.string('email_key', 320).notNullable();
    timestamps(t);
    t.unique(['unsubscribe_groups_id', 'email_key']);
    t.index(['user_id', 'email_key']);
  });

  await knex.schema.createTable('contact_types', (t) => {
    t.increments('id');
    owner(t);
    t.string('name', 255).notNullable();
    timestamps(t);
    softDelete(t);
    t.index(['user_id']);
  });

  // Contacts keep custom-field values in one JSON column (see README: one row per
  // contact keeps imports and streaming lists fast; segments query it with
  // json_extract / ->>).
  await knex.schema.createTable('contacts', (t) => {
    t.increments('id');
    owner(t);
    t.integer('contact_type_id').notNullable().references('id').inTable('contact_types');
    t.string('first_name', 255).notNullable().defaultTo('');
    t.string('last_name', 255).notNullable().defaultTo('');
    t.string('email', 320).notNullable();
    t.string('email_key', 320).notNullable();
    t.string('alt_email', 320).nullable();
    t.integer('country').nullable();
    t.string('state', 255).notNullable().defaultTo('');
    t.string('city', 255).notNullable().defaultTo('');
    t.string('address_line1', 255).notNullable().defaultTo('');
    t.string('address_line2', 255).notNullable().defaultTo('');
    t.string('state_province_region', 255).notNullable().defaultTo('');
    t.string('postal_code', 64).notNullable().defaultTo('');
    json(t, 'custom_fields').nullable();
    timestamps(t);
    softDelete(t);
    t.index(['user_id', 'contact_type_id']);
    t.index(['contact_type_id']);
  });
  await knex.raw(
    'create unique index contacts_user_email_live on contacts (user_id, email_key) where deleted_at is null',
  );

  // Reserved fields (user_id null, is_reserved 1) and custom fields of each account.
  await knex.schema.createTable('fields', (t) => {
    t.increments('id');
    t.integer('user_id').nullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('field_name', 64).notNullable();
    t.string('field_type', 32).notNullable();
    t.integer('is_reserved').notNullable().defaultTo(0);
    timestamps(t, true);
    t.index(['user_id']);
  });
  await knex.raw('create unique index fields_reserved_name on fields (field_name) where user_id is null');
  await knex.raw('create unique index fields_custom_name on fields (user_id, field_name) where user_id is not null');

  await knex.schema.createTable('segments', (t) => {
    t.increments('id');
    owner(t);
    t.integer('contact_type_id').notNullable().references('id').inTable('contact_types');
    t.string('segment_name', 255).notNullable();
    json(t, 'select_field').nullable();
    json(t, 'select_operator').nullable();
    json(t, 'value').nullable();
    t.string('query_type', 8).nullable();
    timestamps(t);
    softDelete(t);
    t.index(['user_id']);
  });

  // Segment recipients: rows matched by the segment's rules (source 'rule', refreshed)
  // and rows stored by hand (source 'manual', kept until deleted).
  await knex.schema.createTable('segment_recipients', (t) => {
    t.increments('id');
    owner(t);
    t.integer('segment_id').notNullable().references('id').inTable('segments').onDelete('CASCADE');
    t.integer('contact_id').nullable().references('id').inTable('contacts').onDelete('SET NULL');
    t.string('source', 8).notNullable().defaultTo('manual');
    t.string('first_name', 255).notNullable().defaultTo('');
    t.string('last_name', 255).notNullable().defaultTo('');
    t.string('email', 320).notNullable();
    t.string('email_key', 320).notNullable();
    t.string('country', 255).nullable();
    t.string('state', 255).nullable();
    t.string('city', 255).nullable();
    t.string('address_line1', 255).nullable();
    timestamps(t);
    t.unique(['segment_id', 'email_key']);
    t.index(['contact_id']);
  });

  await knex.schema.createTable('design_templates', (t) => {
    t.increments('id');
    t.string('template_name', 255).notNullable();
    t.string('preview_image', 255).notNullable();
    t.text('json_code').notNullable();
    t.text('html_code').notNullable();
    t.integer('is_blank').notNullable().defaultTo(0);
    timestamps(t, true);
  });

  await knex.schema.createTable('senders', (t) => {
    t.increments('id');
    owner(t);
    t.string('from_name', 255).notNullable();
    t.string('from_email', 320).notNullable();
    t.string('reply_to_email', 320).notNullable();
    t.integer('country_id').notNullable();
    t.integer('state_id').nullable();
    t.integer('city_id').nullable();
    t.string('zip_code', 64).nullable();
    t.string('company_address', 255).notNullable();
    t.string('company_address2', 255).nullable();
    t.string('nickname', 255).notNullable();
    t.integer('is_verified').notNullable().defaultTo(0);
    t.string('utr', 32).notNullable().unique();
    t.string('verify_token_hash', 128).nullable().unique();
    t.timestamp('send_at', { useTz: true, precision: 6 }).nullable();
    timestamps(t);
    softDelete(t);
    t.index(['user_id']);
  });

  await knex.schema.createTable('single_sends', (t) => {
    t.increments('id');
    owner(t);
    t.integer('template_id').notNullable().references('id').inTable('design_templates');
    json(t, 'recipient_id').notNullable();
    json(t, 'exclude_specific_recipient_id').notNullable();
    t.integer('sender_id').notNullable().references('id').inTable('senders');
    t.integer('unsubscribe_group_id').notNullable().references('id').inTable('unsubscribe_groups');
    t.string('single_send_name', 255).notNullable();
    t.string('from_sender', 320).notNullable();
    t.string('reply_to', 320).notNullable();
    t.string('sender_name', 255).nullable();
    t.string('sender_address', 600).nullable();
    t.string('subject', 998).notNullable();
    t.string('preheader', 998).notNullable();
    t.integer('schedule_type').notNullable().defaultTo(0);
    t.string('schedule_date', 10).notNullable().defaultTo('0000-00-00');
    t.string('schedule_time', 8).notNullable().defaultTo('00:00:00');
    // The UTC instant at which a ready send becomes due (null for status 0).
    t.timestamp('due_at', { useTz: true, precision: 6 }).nullable();
    t.integer('status').notNullable().defaultTo(0);
    t.uuid('utr').notNullable().unique();
    t.text('template_json').nullable();
    t.text('template_html').nullable();
    t.integer('triggered').notNullable().defaultTo(0);
    t.integer('delivered').notNullable().defaultTo(0);
    t.integer('unique_opens').notNullable().defaultTo(0);
    t.integer('total_opens').notNullable().defaultTo(0);
    t.integer('bounces').notNullable().defaultTo(0);
    t.integer('unsubscribes').notNullable().defaultTo(0);
    t.timestamp('sent_at', { useTz: true, precision: 6 }).nullable();
    timestamps(t);
    softDelete(t);
    t.index(['user_id']);
    t.index(['status', 'due_at']);
  });

  await knex.schema.createTable('automations', (t) => {
    t.increments('id');
    owner(t);
    t.integer('automation_for').nullable();
    t.string('automation_for_table', 16).nullable();
    t.string('automation_name', 255).notNullable();
    t.integer('exit_criteria').notNullable().defaultTo(0);
    t.integer('unsubscribe_group_id').nullable().references('id').inTable('unsubscribe_groups');
    t.integer('automation_type').notNullable();
    t.uuid('utr').notNullable().unique();
    t.integer('status').notNullable().defaultTo(0);
    t.timestamp('live_at', { useTz: true, precision: 6 }).nullable();
    t.integer('total_triggered').notNullable().defaultTo(0);
    t.integer('total_delivered').notNullable().defaultTo(0);
    t.integer('total_unique_opens').notNullable().defaultTo(0);
    t.integer('total_opens').notNullable().defaultTo(0);
    t.integer('total_bounces').notNullable().defaultTo(0);
    t.integer('total_unsubscribe').notNullable().defaultTo(0);
    timestamps(t);
    softDelete(t);
    t.index(['user_id']);
  });

  await knex.schema.createTable('automation_schedules', (t) => {
    t.increments('id');
    owner(t);
    t.integer('automation_id').notNullable().references('id').inTable('automations').onDelete('CASCADE');
    t.integer('sender_id').notNullable().references('id').inTable('senders');
    t.string('subject', 998).notNullable();
    t.integer('waiting_period').notNullable().defaultTo(1);
    t.string('waiting_type', 16).notNullable();
    t.uuid('utr').notNullable().unique();
    t.integer('template_id').notNullable().references('id').inTable('design_templates');
    t.string('preview_img', 255).notNullable();
    t.text('template_json').nullable();
    t.text('template_html').nullable();
    timestamps(t);
    t.index(['automation_id']);
  });

  await knex.schema.createTable('notification_recipients', (t) => {
    t.increments('id');
    owner(t);
    t.string('email_address', 320).notNullable();
    t.string('email_key', 320).notNullable();
    t.string('email_owner', 255).notNullable();
    timestamps(t);
    t.unique(['user_id', 'email_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'notification_recipients',
    'automation_schedules',
    'automations',
    'single_sends',
    'senders',
    'design_templates',
    'segment_recipients',
    'segments',
    'fields',
    'contacts',
    'contact_types',
    'unsubscribe_group_recipients',
    'global_unsubscribes',
    'unsubscribe_groups',
    'cities',
    'states',
    'countries',
    'sessions',
    'app_settings',
    'accounts',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
