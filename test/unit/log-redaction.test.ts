import { redactTokens } from '../../src/app';

describe('request log redaction', () => {
  test('when a link carries a token then the logged URL hides it', () => {
    expect(redactTokens('/verify-sender/s3cr3t-token')).toBe('/verify-sender/[redacted]');
    expect(redactTokens('/unsubscribe/abc.def?x=1')).toBe('/unsubscribe/[redacted]?x=1');
    expect(redactTokens('/open/abc.def.gif')).toBe('/open/[redacted]');
    expect(redactTokens('/c/abc.def/2')).toBe('/c/[redacted]/2');
    expect(redactTokens('/preview/schedule/0b6f3c3e-8f1f-4c39-9d0d-1f2a3b4c5d6e')).toBe('/preview/schedule/[redacted]');
    expect(redactTokens('/api/v1/preview/schedule/0b6f3c3e-8f1f-4c39-9d0d-1f2a3b4c5d6e')).toBe('/api/v1/preview/schedule/[redacted]');
  });

  test('when a URL has no token then it is logged as is', () => {
    expect(redactTokens('/api/v1/contacts-type?page=2')).toBe('/api/v1/contacts-type?page=2');
    expect(redactTokens('/templates/newsletter.png')).toBe('/templates/newsletter.png');
  });
});
