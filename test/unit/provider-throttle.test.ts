import { afterDeferral, afterDelivery, heldUntil, isThrottling, providerOfMx } from '../../src/services/delivery/providers';

const at = (now: number, random = 0) => ({ now, retryBaseMs: 60_000, observedIntervalMs: 20, random, code: '4.7.28', provider: 'google' as const });

describe('a provider\'s backoff (pure rules)', () => {
  test('when MX hosts are read then each provider is known by its suffix, and anything else is other', () => {
    expect(providerOfMx(['alt1.gmail-smtp-in.l.google.com'])).toBe('google');
    expect(providerOfMx(['example-com.mail.protection.outlook.com'])).toBe('microsoft');
    expect(providerOfMx(['mta5.am0.yahoodns.net'])).toBe('yahoo');
    expect(providerOfMx(['mx01.mail.icloud.com.'])).toBe('apple');
    expect(providerOfMx(['mail.protonmail.ch'])).toBe('proton');
    expect(providerOfMx(['mx.zoho.eu'])).toBe('zoho');
    expect(providerOfMx(['inbound-smtp.eu-west-1.amazonaws.com'])).toBe('amazon');
    expect(providerOfMx(['mx.notgoogle.com', 'mx.example.org'])).toBe('other');
    expect(providerOfMx([])).toBe('other');
  });

  test.each([
    [421, '421 4.7.0 Try again later, closing connection', true],
    [451, '451 4.7.28 Gmail has detected an unusual rate of unsolicited mail', true],
    [451, '451 4.7.650 The mail server has been temporarily rate limited due to IP reputation', true],
    [421, '421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred', true],
    [450, '450 4.2.1 The user you are trying to contact is receiving mail too quickly', false],
    [451, '451 4.3.0 Mail server temporarily rejected message', false],
    [452, '452 4.2.2 Mailbox full', false],
    [550, '550 5.7.1 rate limited', false],
  ])('when a server answers %s "%s" then throttling is %s', (code, text, expected) => {
    expect(isThrottling(code, text)).toBe(expected);
  });

  test('when a provider defers again after each wait then its rate halves and its wait doubles with jitter up to 30 minutes', () => {
    let state = afterDeferral(undefined, at(0));
    expect(state).toMatchObject({ level: 1, intervalMs: 40, backoffMs: 60_000, waitUntil: 60_000, since: 0 });
    // A deferral of a message already in flight while it waits changes nothing.
    expect(afterDeferral(state, at(10_000))).toMatchObject({ level: 1, waitUntil: 60_000 });
    state = afterDeferral(state, at(60_000, 1));
    expect(state).toMatchObject({ level: 2, intervalMs: 80, backoffMs: 120_000, waitUntil: 60_000 + 150_000, since: 0 });
    for (let i = 0; i < 10; i += 1) state = afterDeferral(state, at(state.waitUntil!, 1));
    expect(state.backoffMs).toBe(30 * 60_000);
    const before = state.waitUntil!;
    state = afterDeferral(state, at(before, 1));
    // With the most jitter, still 30 minutes at most.
    expect(state.waitUntil! - before).toBe(30 * 60_000);
    expect(heldUntil(state, state.waitUntil! - 1)).toBe(state.waitUntil);
    expect(heldUntil(state, state.waitUntil!)).toBeUndefined();
  });

  test('when a slowed provider takes mail again then every fifth delivery climbs one level back, and level 0 is full speed', () => {
    let state = afterDeferral(afterDeferral(undefined, at(0)), at(60_000));
    expect(state.level).toBe(2);
    for (let i = 0; i < 5; i += 1) state = afterDelivery(state);
    expect(state).toMatchObject({ level: 1, intervalMs: 40, successes: 0 });
    for (let i = 0; i < 5; i += 1) state = afterDelivery(state);
    expect(state).toMatchObject({ level: 0, intervalMs: 0, waitUntil: null, since: null });
  });
});
