import { useHarness } from '../support/harness';

interface Country { id: number; name: string; iso2: string; phone_code: string }
interface State { id: number; country_id: number; name: string; iso2: string }
interface City { id: number; state_id: number; name: string }
interface Geography { countries: Country[]; states: State[]; cities: City[] }

const PATH = '/get/country-state-city';

describe('country, state and city', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let whole: Geography;
  let etag: string;

  beforeAll(async () => {
    const res = await h.api(alice).get(PATH).set('Accept-Encoding', 'gzip').expect(200);
    expect(res.body.status).toBe('success');
    whole = res.body.message;
    etag = res.headers.etag;
  });

  test('when the list is asked then it holds more than 200 countries, 1,000 states and 1,000 cities', () => {
    expect(Object.keys(whole)).toEqual(['countries', 'states', 'cities']);
    expect(whole.countries.length).toBeGreaterThan(200);
    expect(whole.states.length).toBeGreaterThan(1000);
    expect(whole.cities.length).toBeGreaterThan(1000);
  });

  test('when records are read then they carry exactly the decided fields', () => {
    const india = whole.countries.find((c) => c.iso2 === 'IN')!;
    expect(india).toEqual({ id: expect.any(Number), name: 'India', iso2: 'IN', phone_code: '91' });
    const state = whole.states.find((s) => s.country_id === india.id && s.name === 'Maharashtra')!;
    expect(state).toEqual({ id: expect.any(Number), country_id: india.id, name: 'Maharashtra', iso2: 'MH' });
    const city = whole.cities.find((c) => c.state_id === state.id && c.name === 'Mumbai')!;
    expect(city).toEqual({ id: expect.any(Number), state_id: state.id, name: 'Mumbai' });
  });

  test('when the client accepts gzip then the body is gzipped with a strong ETag and a 304 on revalidation', async () => {
    const res = await h.api(alice).get(PATH).set('Accept-Encoding', 'gzip, deflate, br').expect(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(res.headers.etag).toBe(etag);
    expect(Number(res.headers['content-length'])).toBeLessThan(JSON.stringify(res.body).length / 3);

    const again = await h.api(alice).get(PATH).set('Accept-Encoding', 'gzip').set('If-None-Match', etag).expect(304);
    expect(again.headers.etag).toBe(etag);
    expect(again.text ?? '').toBe('');
    await h.api(alice).get(PATH).set('Accept-Encoding', 'gzip').set('If-None-Match', '"stale"').expect(200);
  });

  test('when the client does not accept gzip then it gets plain JSON with its own ETag', async () => {
    const res = await h.api(alice).get(PATH).set('Accept-Encoding', 'identity').buffer(true).expect(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(res.headers.etag).not.toBe(etag);
    expect(res.body.message.cities.length).toBe(whole.cities.length);
    await h.api(alice).get(PATH).set('Accept-Encoding', 'identity').set('If-None-Match', res.headers.etag).expect(304);
    const br = await h.api(alice).get(PATH).set('Accept-Encoding', 'br').expect(200);
    expect(br.headers['content-encoding']).toBeUndefined();
  });

  test('when country_id is given then states and cities narrow to that country', async () => {
    const india = whole.countries.find((c) => c.iso2 === 'IN')!;
    const res = await h.api(alice).get(`${PATH}?country_id=${india.id}`).expect(200);
    const { countries, states, cities } = res.body.message as Geography;
    expect(countries.length).toBe(whole.countries.length);
    const expectedStates = whole.states.filter((s) => s.country_id === india.id);
    expect(states).toEqual(expectedStates);
    const stateIds = new Set(expectedStates.map((s) => s.id));
    expect(cities).toEqual(whole.cities.filter((c) => stateIds.has(c.state_id)));
    expect(cities.length).toBeGreaterThan(100);
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(res.headers.etag).not.toBe(etag);
  });

  test('when state_id is given then states and cities narrow to that state', async () => {
    const state = whole.states.find((s) => s.name === 'Maharashtra')!;
    const res = await h.api(alice).get(`${PATH}?state_id=${state.id}`).expect(200);
    expect(res.body.message.states).toEqual([state]);
    expect(res.body.message.cities).toEqual(whole.cities.filter((c) => c.state_id === state.id));
    const other = whole.countries.find((c) => c.iso2 === 'FR')!;
    const none = await h.api(alice).get(`${PATH}?country_id=${other.id}&state_id=${state.id}`).expect(200);
    expect(none.body.message.states).toEqual([]);
    expect(none.body.message.cities).toEqual([]);
  });

  test('when country_id or state_id is not an integer or names nothing then 422', async () => {
    const bad = await h.api(alice).get(`${PATH}?country_id=abc&state_id=1.5`).expect(422);
    expect(bad.body).toEqual({
      status: 'failed',
      errors: { country_id: ['The country id must be an integer.'], state_id: ['The state id must be an integer.'] },
    });
    const unknown = await h.api(alice).get(`${PATH}?country_id=999999&state_id=0`).expect(422);
    expect(unknown.body).toEqual({
      status: 'failed',
      errors: { country_id: ['The selected country id is invalid.'], state_id: ['The selected state id is invalid.'] },
    });
    const huge = await h.api(alice).get(`${PATH}?country_id=99999999999999999999`).expect(422);
    expect(huge.body.errors).toEqual({ country_id: ['The selected country id is invalid.'] });
  });

  test('when keys are missing then 401 before any data', async () => {
    await h.api().get(PATH).expect(401);
  });

  test('when other services check ids then only seeded ones exist', async () => {
    const { geography } = h.runtime.services;
    await expect(geography.countryExists(whole.countries[0].id)).resolves.toBe(true);
    await expect(geography.stateExists(whole.states[0].id)).resolves.toBe(true);
    await expect(geography.cityExists(whole.cities[0].id)).resolves.toBe(true);
    await expect(geography.countryExists(999999)).resolves.toBe(false);
  });
});
