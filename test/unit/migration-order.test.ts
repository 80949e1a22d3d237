import { migrations } from '../../migrations';

describe('the migration list', () => {
  test('when branches add migrations then the list stays in name order, each name once', () => {
    const names = migrations.map(([name]) => name);
    expect(names).toEqual([...new Set(names)].sort());
  });
});
