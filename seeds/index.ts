import type { Knex } from 'knex';
import { seedReservedFields } from './reserved-fields';
import { seedDesignTemplates } from './design-templates';
import { seedGeography } from './geography';
import { seedTimeZones } from './time-zones';

/** Reference data shared by every account. Each seed is idempotent and cheap when nothing changed. */
export async function runSeeds(db: Knex): Promise<void> {
  await seedReservedFields(db);
  await seedDesignTemplates(db);
  await seedGeography(db);
  await seedTimeZones(db);
}
