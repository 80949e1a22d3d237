import { ConfigError, loadConfig } from '../../src/config';

describe('configuration', () => {
  test('when TRUST_PROXY is unset, false or 0 then no proxy is trusted', () => {
    for (const value of [undefined, '', 'false', '0']) expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(false);
  });

  test('when TRUST_PROXY is true, a hop count or addresses then Express gets them as such', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', '::1']);
  });

  test('when TRUST_PROXY names something that is not an address then the start fails with a clear message', () => {
    for (const value of ['nginx', '10.0.0.0/33', '10.0.0.1/8/2', 'yes']) {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TRUST_PROXY: 'nginx' })).toThrow('TRUST_PROXY must be false, true, a number of hops or proxy addresses such as "loopback, 10.0.0.0/8", got "nginx"');
  });
});
