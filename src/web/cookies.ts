import type { Request, Response } from 'express';

/**
 * The dashboard's cookies: always HttpOnly and Path=/, SameSite=Lax unless stricter, and
 * Secure with the `__Host-` prefix when BASE_URL is https (the prefix forbids a Domain
 * attribute, so a sibling subdomain cannot plant or read them).
 */
export class Cookies {
  constructor(readonly secure: boolean) {}

  name(base: string): string {
    return this.secure ? `__Host-${base}` : base;
  }

  read(req: Request, base: string): string | undefined {
    const header = req.headers.cookie;
    if (!header) return undefined;
    const wanted = this.name(base);
    for (const pair of header.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim() !== wanted) continue;
      try {
        return decodeURIComponent(pair.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  set(res: Response, base: string, value: string, options: { maxAgeMs?: number; sameSite?: 'lax' | 'strict' } = {}): void {
    res.cookie(this.name(base), value, {
      httpOnly: true,
      secure: this.secure,
      sameSite: options.sameSite ?? 'lax',
      path: '/',
      ...(options.maxAgeMs === undefined ? {} : { maxAge: options.maxAgeMs }),
    });
  }

  clear(res: Response, base: string): void {
    res.clearCookie(this.name(base), { httpOnly: true, secure: this.secure, sameSite: 'lax', path: '/' });
  }
}
