import type { Express } from 'express';
import { redactTokens } from '../../src/app';
import { createDashboard } from '../../src/web';
import { useHarness } from '../support/harness';

describe('request log redaction', () => {
  test('when a link carries a token then the logged URL hides it', () => {
    expect(redactTokens('/verify-sender/s3cr3t-token')).toBe('/verify-sender/[redacted]');
    expect(redactTokens('/unsubscribe/abc.def?x=1')).toBe('/unsubscribe/[redacted]?x=1');
    expect(redactTokens('/open/abc.def.gif')).toBe('/open/[redacted]');
    expect(redactTokens('/c/abc.def/2')).toBe('/c/[redacted]/2');
    expect(redactTokens('/subscribe/confirm/s3cr3t-token')).toBe('/subscribe/confirm/[redacted]');
    expect(redactTokens('/preview/schedule/0b6f3c3e-8f1f-4c39-9d0d-1f2a3b4c5d6e')).toBe('/preview/schedule/[redacted]');
    expect(redactTokens('/api/v1/preview/schedule/0b6f3c3e-8f1f-4c39-9d0d-1f2a3b4c5d6e')).toBe('/api/v1/preview/schedule/[redacted]');
  });

  test('when a URL has no token then it is logged as is', () => {
    expect(redactTokens('/api/v1/contacts-type?page=2')).toBe('/api/v1/contacts-type?page=2');
    expect(redactTokens('/templates/newsletter.png')).toBe('/templates/newsletter.png');
    expect(redactTokens('/subscribe/f0rm-id')).toBe('/subscribe/f0rm-id');
  });
});

/**
 * Path parameters of public routes that are not credentials: a sign-up form's public id is
 * printed in the page that embeds the form, a public archive's id and its sends' utr are the
 * archive's published addresses, and the counter of a tracked link is its position.
 */
const NOT_SECRET = new Set(['/subscribe/:id', '/archive/:id', '/archive/:id/rss.xml', '/archive/:id/:utr', '/c/:token/:n#n']);

type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] } };

/** Every route of the app's routers (public pages, provider webhooks, the API's tables), as method and path. */
function routesOf(stack: Layer[]): [string, string][] {
  return stack.flatMap((layer): [string, string][] => {
    if (layer.route) return Object.keys(layer.route.methods).map((m): [string, string] => [m.toUpperCase(), layer.route!.path]);
    return layer.handle?.stack ? routesOf(layer.handle.stack) : [];
  });
}

describe('request log redaction of every public route', () => {
  const h = useHarness();

  test('when any route of the app or public page of the dashboard has a path parameter then the request log hides its value, unless it is no credential', () => {
    const app = h.runtime.app as Express & { router: { stack: Layer[] } };
    const dashboard = createDashboard(h.runtime.config, h.runtime.services, h.runtime.logger);
    const routes: (readonly [string, string])[] = [...routesOf(app.router.stack), ...dashboard.publicRoutes];
    expect(routes).toEqual(expect.arrayContaining([['GET', '/subscribe/confirm/:token'], ['GET', '/c/:token/:n'], ['GET', '/login']]));
    const shown: string[] = [];
    for (const [method, path] of routes) {
      const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const url = path.replace(/:(\w+)/g, (_m: string, name: string) => `SECRET-${name}`);
      for (const name of params) {
        if (NOT_SECRET.has(path) || NOT_SECRET.has(`${path}#${name}`)) continue;
        for (const logged of [redactTokens(url), redactTokens(`${url}?x=1`)]) {
          if (logged!.includes(`SECRET-${name}`)) shown.push(`${method} ${path}: ${logged}`);
        }
      }
    }
    expect(shown).toEqual([]);
  });

  test('when a URL carries an address or a search term then the logged URL hides them and keeps numbers', () => {
    expect(redactTokens('/api/v1/contacts/privacy-export?email=erin%40example.com')).toBe('/api/v1/contacts/privacy-export?email=[redacted]');
    expect(redactTokens('/api/v1/contacts/list?search=Erin&page=2&per_page=50')).toBe('/api/v1/contacts/list?search=[redacted]&page=2&per_page=50');
    expect(redactTokens('/contacts/privacy/export.json?email=erin@example.com')).toBe('/contacts/privacy/export.json?email=[redacted]');
    expect(redactTokens('/x?erin@example.com')).toBe('/x?[redacted]');
    expect(redactTokens('/people/erin@example.com/edit')).toBe('/people/[redacted]/edit');
  });
});
