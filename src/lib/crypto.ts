import crypto from 'node:crypto';

/** URL-safe random token of `bytes` bytes of entropy. */
export function randomToken(bytes = 24): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function sha256(value: string): string {
  // The one-shot form: no Hash object per call (every API request hashes its secret key).
  return crypto.hash('sha256', value, 'hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

// scrypt (memory-hard): N=2^15, r=8, p=1 uses 32 MiB per hash.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  return new Promise((resolve, reject) => {
    crypto.scrypt(password, salt, 32, SCRYPT, (err, key) => {
      if (err) reject(err);
      else resolve(`scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`);
    });
  });
}

export function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !key) return Promise.resolve(false);
  const expected = Buffer.from(key, 'base64');
  return new Promise((resolve) => {
    crypto.scrypt(
      password,
      Buffer.from(salt, 'base64'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem },
      (err, derived) => resolve(!err && crypto.timingSafeEqual(derived, expected)),
    );
  });
}

/** HMAC-SHA256 of `value` under `secret`, base64url. */
export function hmac(secret: string, value: string): string {
  return crypto.createHmac('sha256', secret).update(value).digest('base64url');
}

/** A key of its own for one purpose, derived from the app secret (so one leak does not open the others). */
export function purposeKey(appSecret: string, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', appSecret, Buffer.alloc(0), purpose, 32));
}

/** Encrypts a secret that must be read back (AES-256-GCM under a key derived from the app secret). */
export function sealSecret(appSecret: string, purpose: string, plain: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', purposeKey(appSecret, purpose), iv);
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join('.');
}

/** The secret sealed by sealSecret; throws when it was sealed under another app secret or altered. */
export function openSecret(appSecret: string, purpose: string, sealed: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !data) throw new Error('not a sealed secret');
  const decipher = crypto.createDecipheriv('aes-256-gcm', purposeKey(appSecret, purpose), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
}
