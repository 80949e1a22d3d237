import type { Knex } from 'knex';
import { createFieldsService } from '../audience/fields';
import { customFieldDefs } from '../audience/custom-field-values';
import { SegmentField, segmentFields } from '../audience/segment-rules';
import { CountryResolver, loadCountryResolver } from '../reference/country-lookup';

/** What conditions are checked and compiled against: an account's fields and the countries. */
export interface RuleSource {
  forAccount(db: Knex | Knex.Transaction, userId: number): Promise<{ fields: Map<string, SegmentField>; countryOf: CountryResolver; customFields: Set<string> }>;
}

/** Reads each account's fields once for the life of the source (one engine pass, or one save). */
export function ruleSource(): RuleSource {
  const accounts = new Map<number, Awaited<ReturnType<RuleSource['forAccount']>>>();
  let countries: CountryResolver | undefined;
  return {
    async forAccount(db, userId) {
      if (!accounts.has(userId)) {
        const defs = await customFieldDefs(createFieldsService({ db: db as Knex }), { userId }, db as Knex.Transaction);
        countries ??= await loadCountryResolver(db as Knex);
        accounts.set(userId, { fields: segmentFields(defs), countryOf: countries, customFields: new Set(defs.map((d) => d.field_name)) });
      }
      return accounts.get(userId)!;
    },
  };
}
