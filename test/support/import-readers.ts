import fs from 'node:fs';
import path from 'node:path';
import type { Harness, TestAccount } from './harness';

/** A contact as GET /contacts/list shows it: the fields the import tests read back. */
export interface ListedContact {
  email: string;
  first_name: string;
  last_name: string;
  city: string;
  postal_code: string;
  country: string;
  alt_email: string | null;
  address_line1: string;
  state: string;
  custom_field: Record<string, { field_value: string | null }> | null;
}

/** A file of test/fixtures/imports (other tools' exports). */
export function importFixture(name: string): Buffer {
  return fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'imports', name));
}

/** What an import left, read through the API as a client would. */
export function importReaders(h: Harness) {
  return {
    /** The account's contacts by address. */
    async contactsOf(account: TestAccount): Promise<Map<string, ListedContact>> {
      const list: ListedContact[] = (await h.api(account).get('/contacts/list').expect(200)).body.message.contacts;
      return new Map(list.map((c) => [c.email, c]));
    },
    /** The account's globally unsubscribed addresses, sorted. */
    async unsubscribedOf(account: TestAccount): Promise<string[]> {
      const res = await h.api(account).get('/global-unsubscribes').expect(200);
      return res.body.message.unSubscribers.map((u: { email_address: string }) => u.email_address).sort();
    },
  };
}
