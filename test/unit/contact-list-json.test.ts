import { contactListJson, contactRecord } from '../../src/services/audience/contact-records';
import type { CustomFieldDef } from '../../src/services/audience/custom-field-values';

/** A list row as the query returns it (contact columns, the type's columns, the country's name). */
function row(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 7, user_id: 3, contact_type_id: 11, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org', alt_email: null,
    country: 81, country_name: 'Germany', state: 'Berlin', city: 'Berlin', address_line1: 'Unter den Linden 1', address_line2: null,
    state_province_region: '', postal_code: '10115', custom_fields: '{"company_name":"Acme","age":"36"}', deleted_at: null,
    created_at: '2026-11-25T06:00:00.123Z', updated_at: '2026-11-25T07:30:00.000Z',
    ct_name: 'Customers', ct_deleted_at: null, ct_created_at: '2026-11-01T00:00:00.000Z', ct_updated_at: '2026-11-02T00:00:00.000Z',
    ...overrides,
  };
}

const defs = (...names: string[]): CustomFieldDef[] => names.map((field_name, i) => ({ id: i + 1, field_name, field_type: 'text' }));

/** What the list wrote before: the record object, stringified. */
const expected = (r: Record<string, unknown>, d: CustomFieldDef[]) => JSON.stringify(contactRecord(r, d, 'list'));

describe('the contact list written as JSON straight from its rows', () => {
  test.each<[string, Record<string, unknown>, CustomFieldDef[]]>([
    ['a plain contact with two custom fields', row(), defs('company_name', 'age')],
    ['no custom fields in the account', row(), []],
    ['a field with no stored value, a stored null and a number', row({ custom_fields: '{"age":36,"note":null}' }), defs('company_name', 'age', 'note')],
    ['custom fields stored as an object (PostgreSQL json) or missing', row({ custom_fields: { company_name: 'Acme' } }), defs('company_name')],
    ['no stored custom fields at all', row({ custom_fields: null }), defs('company_name')],
    ['quotes, backslashes, line separators and other scripts', row({ first_name: 'Zoë "Z"', last_name: 'O\\Brien\u2028', city: 'Kraków 🚲', email: 'zoe+\t@example.org' }), defs('x')],
    ['nulls where the list shows empty strings', row({ first_name: null, last_name: null, state: null, city: undefined, postal_code: null }), []],
    ['an alternative email, no country, a deleted contact', row({ alt_email: 'other@example.org', country_name: null, deleted_at: '2026-11-24T10:00:00.000Z' }), []],
    ['dates as the PostgreSQL driver returns them', row({ created_at: new Date('2026-11-25T06:00:00.123Z'), ct_created_at: new Date('2026-01-01T00:00:00Z') }), []],
    ['ids as the PostgreSQL driver returns bigints', row({ id: '9007199254740993', user_id: '3', contact_type_id: '11' }), []],
    ['field names that are array indexes (kept in JSON.stringify\'s order)', row({ custom_fields: '{"2024":"yes","b":"no"}' }), defs('b', '2024')],
    ['field names needing escapes', row({ custom_fields: '{"we\\"ird":"v"}' }), defs('we"ird')],
  ])('when the row has %s then the text equals the record stringified', (_name, r, d) => {
    const text = contactListJson(d)(r);
    expect(text).toBe(expected(r, d));
    expect(() => JSON.parse(text)).not.toThrow();
  });

  test('when several contacts share a type then each gets the same type object, written once', () => {
    const write = contactListJson(defs('company_name'));
    const a = write(row({ id: 1 }));
    const b = write(row({ id: 2, ct_name: 'changed later in the same list' }));
    expect(JSON.parse(b).contact_type).toEqual(JSON.parse(a).contact_type);
    expect(JSON.parse(write(row({ id: 3, contact_type_id: 12, ct_name: 'Partners' }))).contact_type.name).toBe('Partners');
  });
});
