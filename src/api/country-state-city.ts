import type { Request } from 'express';
import type { FieldErrors } from '../lib/errors';
import { toId } from '../lib/http';
import { messages, throwIfAny } from '../lib/validation';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import type { GeographyFilter, GeographyService } from '../services/reference/geography';
import { EncodedJson, encodeJson, sendEncodedJson } from './encoded-json';
import { holds, ref } from './describe';
import { arrayOf } from './schema-words';
import type { ApiRoutes } from './routes';

/** Reference data changes only when the seed package does, i.e. with a new release. */
const MAX_AGE_SECONDS = 3600;

async function encodeGeography(geography: GeographyService, filter: GeographyFilter = {}): Promise<EncodedJson> {
  const [countries, states, cities] = await Promise.all([geography.countries(), geography.states(filter), geography.cities(filter)]);
  return encodeJson({ status: 'success', message: { countries, states, cities } });
}

/** The optional `country_id` / `state_id` extension: integers naming a seeded country / state. */
async function filterOf(req: Request, geography: GeographyService): Promise<GeographyFilter> {
  // Present means narrowed: an id toId() cannot read (0, too large) names nothing, so it is refused below.
  const idOf = (value: unknown) => (value === undefined || value === '' ? undefined : (toId(value) ?? 0));
  const filter: GeographyFilter = { countryId: idOf(req.query.country_id), stateId: idOf(req.query.state_id) };
  const errors: FieldErrors = {};
  if (filter.countryId !== undefined && !(await geography.countryExists(filter.countryId))) errors.country_id = [messages.selected('country_id')];
  if (filter.stateId !== undefined && !(await geography.stateExists(filter.stateId))) errors.state_id = [messages.selected('state_id')];
  throwIfAny(errors);
  return filter;
}

export function mountCountryStateCity(routes: ApiRoutes, { geography }: Services): void {
  // The whole list (~150k cities) is built and compressed once per process, on first use.
  let whole: Promise<EncodedJson> | undefined;
  const wholeList = () => {
    whole ??= encodeGeography(geography).catch((err) => {
      whole = undefined;
      throw err;
    });
    return whole;
  };

  routes.get(
    '/get/country-state-city',
    { summary: 'List countries, states and cities', response: holds({ countries: arrayOf(ref('Country')), states: arrayOf(ref('State')), cities: arrayOf(ref('City')) }) },
    validate(field('country_id', 'query').optional().integer(), field('state_id', 'query').optional().integer()),
    async (req, res) => {
      const filter = await filterOf(req, geography);
      const narrowed = filter.countryId !== undefined || filter.stateId !== undefined;
      const encoded = narrowed ? await encodeGeography(geography, filter) : await wholeList();
      sendEncodedJson(req, res, encoded, MAX_AGE_SECONDS);
    },
  );
}
