import type { ServiceDeps } from '../context';

export interface CountryRecord {
  id: number;
  name: string;
  iso2: string;
  phone_code: string;
}

export interface StateRecord {
  id: number;
  country_id: number;
  name: string;
  iso2: string;
}

export interface CityRecord {
  id: number;
  state_id: number;
  name: string;
}

/** Narrows states and cities to one country and/or one state (the list extension). */
export interface GeographyFilter {
  countryId?: number;
  stateId?: number;
}

/**
 * Countries, states and cities: seeded reference data, the same for every account. Senders
 * and contacts store these ids and check them with the *Exists functions.
 */
export function createGeographyService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async countries(): Promise<CountryRecord[]> {
      const rows = await db('countries').select('id', 'name', 'iso2', 'phone_code').orderBy('id');
      return rows.map((r) => ({ id: Number(r.id), name: r.name, iso2: r.iso2, phone_code: r.phone_code }));
    },

    async states(filter: GeographyFilter = {}): Promise<StateRecord[]> {
      const query = db('states').select('id', 'country_id', 'name', 'iso2').orderBy('id');
      if (filter.countryId !== undefined) query.where({ country_id: filter.countryId });
      if (filter.stateId !== undefined) query.where({ id: filter.stateId });
      const rows = await query;
      return rows.map((r) => ({ id: Number(r.id), country_id: Number(r.country_id), name: r.name, iso2: r.iso2 }));
    },

    async cities(filter: GeographyFilter = {}): Promise<CityRecord[]> {
      const query = db('cities').select('id', 'state_id', 'name').orderBy('id');
      if (filter.stateId !== undefined) query.where({ state_id: filter.stateId });
      if (filter.countryId !== undefined) query.whereIn('state_id', db('states').select('id').where({ country_id: filter.countryId }));
      const rows = await query;
      return rows.map((r) => ({ id: Number(r.id), state_id: Number(r.state_id), name: r.name }));
    },

    async countryExists(id: number): Promise<boolean> {
      return Boolean(await db('countries').where({ id }).first('id'));
    },

    async stateExists(id: number): Promise<boolean> {
      return Boolean(await db('states').where({ id }).first('id'));
    },

    async cityExists(id: number): Promise<boolean> {
      return Boolean(await db('cities').where({ id }).first('id'));
    },
  };
}

export type GeographyService = ReturnType<typeof createGeographyService>;
