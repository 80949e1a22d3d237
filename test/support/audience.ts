import { emailKey } from '../../src/lib/email-key';
import type { Harness, TestAccount } from './harness';

/** Small fixtures for contacts, custom fields and segments. */

export async function addContactType(h: Harness, account: TestAccount, name: string): Promise<number> {
  await h.api(account).post('/contacts-type/add').field('name', name).expect(200);
  const row = await h.runtime.db('contact_types').where({ user_id: account.user_id, name }).orderBy('id', 'desc').first('id');
  return Number(row.id);
}

/** A custom field of the account, through the fields API. */
export async function addCustomField(h: Harness, account: TestAccount, fieldName: string, fieldType: 'text' | 'number' | 'datetime-local'): Promise<void> {
  await h.api(account).post('/custom-fields/save').field('field_name', fieldName).field('field_type', fieldType).expect(200);
}

export async function countryId(h: Harness, iso2: string): Promise<number> {
  const row = await h.runtime.db('countries').where({ iso2 }).first('id');
  return Number(row.id);
}

/** Adds a contact through the API and returns its id. */
export async function addContact(h: Harness, account: TestAccount, fields: Record<string, unknown>): Promise<number> {
  const res = await h.api(account).post('/contacts/add').send(fields);
  if (res.status !== 200) throw new Error(`add contact failed: ${res.status} ${JSON.stringify(res.body)}`);
  const row = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: emailKey(String(fields.email)) }).whereNull('deleted_at').first('id');
  return Number(row.id);
}
