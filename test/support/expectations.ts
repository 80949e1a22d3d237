import type { ApiClient } from './harness';

/** The reference's failure for a record that is missing or owned by another account. */
export const NOT_FOUND = { status: 'failed', errors: 'Record Not Found' };

/** The `strIds` rules every bulk delete shares: required, integers only, at most 1000. */
export async function expectBulkIdRules(api: ApiClient, path: string): Promise<void> {
  const missing = await api.post(path).type('form').send('').expect(422);
  expect(missing.body).toEqual({ status: 'failed', errors: { strIds: ['The strIds field is required.'] } });
  const bad = await api.post(path).type('form').send('strIds[0]=1&strIds[1]=two').expect(422);
  expect(bad.body).toEqual({ status: 'failed', errors: { strIds: ['The strIds must contain only integers.'] } });
  const tooMany = await api.post(path).send({ strIds: Array.from({ length: 1001 }, (_, i) => i + 1) }).expect(422);
  expect(tooMany.body).toEqual({ status: 'failed', errors: { strIds: ['The strIds may not have more than 1000 items.'] } });
}

/** A delete addressed by a query id: missing is required, a non-integer is refused. */
export async function expectDeleteIdRules(api: ApiClient, path: string, param = 'id'): Promise<void> {
  const name = param.replace(/_/g, ' ');
  const missing = await api.delete(path).expect(422);
  expect(missing.body).toEqual({ status: 'failed', errors: { [param]: [`The ${name} field is required.`] } });
  const bad = await api.delete(`${path}?${param}=1.5`).expect(422);
  expect(bad.body).toEqual({ status: 'failed', errors: { [param]: [`The ${name} must be an integer.`] } });
}

/** The reference's failure envelope around the fields' messages (or one sentence). */
export function failed(errors: Record<string, unknown> | string): { status: 'failed'; errors: Record<string, unknown> | string } {
  return { status: 'failed', errors };
}
