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

  test('when the RETENTION settings are unset then events and messages are kept for ever and webhook deliveries 30 days; days are read as given', () => {
    expect(loadConfig({}).retention).toEqual({ events: 0, messages: 0, webhookDeliveries: 30 });
    expect(loadConfig({ RETENTION_EVENTS_DAYS: '180', RETENTION_MESSAGES_DAYS: '30', RETENTION_WEBHOOK_DELIVERIES_DAYS: '0' }).retention).toEqual({ events: 180, messages: 30, webhookDeliveries: 0 });
  });

  test('when RETENTION_MESSAGES_DAYS is under 30 (unsubscribe links would stop working) or a setting is not a whole number then the start fails with a clear message', () => {
    expect(() => loadConfig({ RETENTION_MESSAGES_DAYS: '7' })).toThrow('RETENTION_MESSAGES_DAYS must be 0 (keep) or at least 30: a message\'s unsubscribe link works only while its row is kept, got "7"');
    expect(() => loadConfig({ RETENTION_EVENTS_DAYS: '-1' })).toThrow('RETENTION_EVENTS_DAYS must be an integer of at least 0, got "-1"');
    expect(() => loadConfig({ RETENTION_WEBHOOK_DELIVERIES_DAYS: 'a month' })).toThrow(ConfigError);
  });
});
