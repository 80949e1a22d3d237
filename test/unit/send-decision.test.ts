import { failedOutcome, IN_DOUBT_TWICE } from '../../src/services/delivery/ledger';
import { handOverFailure } from '../../src/services/delivery/relays';
import { decideClaim } from '../../src/services/delivery/sending';

/** A claimed row as a fresh claim leaves it: first attempt, never begun before. */
const claimed = (row: Partial<{ id: number; attempts: number; unconfirmed: number }> = {}, unmailable = false) => ({
  row: { id: 7, attempts: 1, unconfirmed: 0, ...row },
  unmailable,
});

describe('whether a claimed message goes', () => {
  test('when a claimed message is due and nothing stands against it then it goes', () => {
    expect(decideClaim(claimed(), 5)).toEqual({ verdict: 'go' });
    // The last attempt allowed still goes.
    expect(decideClaim(claimed({ attempts: 5 }), 5)).toEqual({ verdict: 'go' });
    // In flight at one crash: it may be sent once more.
    expect(decideClaim(claimed({ unconfirmed: 1 }), 5)).toEqual({ verdict: 'go' });
  });

  test('when the address left the list (or the contact was deleted) after queueing then it is skipped as suppressed, before any other rule', () => {
    expect(decideClaim(claimed({ attempts: 9, unconfirmed: 2 }, true), 5)).toEqual({
      verdict: 'skip',
      outcome: { id: 7, result: 'suppressed', error: 'unsubscribed, bounced or deleted before sending' },
    });
  });

  test('when a row was claimed more often than attempts allow (the worker kept stopping) then it is not sent and its retry is final', () => {
    expect(decideClaim(claimed({ attempts: 6 }), 5)).toEqual({
      verdict: 'wait',
      outcome: { id: 7, result: 'retry', attempts: 6, code: null, error: 'too many attempts (the worker stopped while sending)' },
    });
  });

  test('when a message was in flight at two crashes then it is never sent a third time', () => {
    expect(decideClaim(claimed({ unconfirmed: 2 }), 5)).toEqual({ verdict: 'skip', outcome: { id: 7, result: 'failed', error: IN_DOUBT_TWICE } });
    expect(decideClaim(claimed({ unconfirmed: 3 }), 5)).toMatchObject({ verdict: 'skip', outcome: { result: 'failed' } });
  });
});

describe('what a failed hand-over records', () => {
  const row = { id: 7, user_id: 3, email_key: 'ann@example.org', attempts: 2 };

  test('when the server refuses the address, the sender or the message, or goes silent then the ledger records it in those terms', () => {
    expect(failedOutcome(row, { outcome: 'bounce', code: 550, message: '550 no such user' })).toEqual({
      id: 7, result: 'bounce', userId: 3, emailKey: 'ann@example.org', code: 550, error: '550 no such user',
    });
    expect(failedOutcome(row, { outcome: 'policy', code: 550, message: 'DMARC' }, 4)).toEqual({ id: 7, result: 'policy', code: 550, error: 'DMARC', relayId: 4 });
    expect(failedOutcome(row, { outcome: 'unconfirmed', code: null, message: 'silent' }, 4)).toEqual({ id: 7, result: 'unconfirmed', error: 'silent', relayId: 4 });
    expect(failedOutcome(row, { outcome: 'failed', code: 400, message: 'bad request' })).toEqual({ id: 7, result: 'failed', error: 'bad request' });
    expect(failedOutcome(row, { outcome: 'retry', code: 451, message: 'later' })).toEqual({ id: 7, result: 'retry', attempts: 2, code: 451, error: 'later' });
  });

  test('when the instance\'s SMTP server answers 5xx or 4xx then the message bounces or waits, with no relay named', () => {
    const smtp = (responseCode: number, response: string) => Object.assign(new Error(response), { responseCode, response, code: 'EENVELOPE' });
    expect(handOverFailure(smtp(550, '550 5.1.1 No such user'))).toMatchObject({ failure: { outcome: 'bounce', code: 550 }, relayId: null });
    expect(handOverFailure(smtp(451, '451 4.3.0 try again later'))).toMatchObject({ failure: { outcome: 'retry', code: 451 }, relayId: null });
  });
});
