import type { Knex } from 'knex';
import { RESERVED_FIELDS } from '../src/lib/constants';

export async function seedReservedFields(db: Knex): Promise<void> {
  const existing = new Set(
    (await db('fields').whereNull('user_id').select('field_name')).map((r: { field_name: string }) => r.field_name),
  );
  const missing = RESERVED_FIELDS.filter((f) => !existing.has(f.field_name)).map((f) => ({
    user_id: null,
    field_name: f.field_name,
    field_type: f.field_type,
    is_reserved: 1,
    created_at: null,
    updated_at: null,
  }));
  if (missing.length > 0) await db('fields').insert(missing);
}
