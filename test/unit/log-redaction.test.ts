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

  test('when a URL carries an address or a search term then the logged URL hides them and keeps numbers', () => {
    expect(redactTokens('/api/v1/contacts/privacy-export?email=erin%40example.com')).toBe('/api/v1/contacts/privacy-export?email=[redacted]');
    expect(redactTokens('/api/v1/contacts/list?search=Erin&page=2&per_page=50')).toBe('/api/v1/contacts/list?search=[redacted]&page=2&per_page=50');
    expect(redactTokens('/contacts/privacy/export.json?email=erin@example.com')).toBe('/contacts/privacy/export.json?email=[redacted]');
    expect(redactTokens('/x?erin@example.com')).toBe('/x?[redacted]');
    expect(redactTokens('/people/erin@example.com/edit')).toBe('/people/[redacted]/edit');
  });
});
