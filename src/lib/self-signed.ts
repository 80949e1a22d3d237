import crypto from 'node:crypto';

/** DER: one tag-length-value. */
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length = n < 0x80 ? Buffer.from([n]) : (() => {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    return Buffer.from([0x80 | bytes.length, ...bytes]);
  })();
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const ECDSA_SHA256 = seq(Buffer.from('06082a8648ce3d040302', 'hex'));
const COMMON_NAME = Buffer.from('0603550403', 'hex');

function name(cn: string): Buffer {
  return seq(tlv(0x31, seq(COMMON_NAME, tlv(0x0c, Buffer.from(cn, 'utf8')))));
}

/** UTCTime (years before 2050, as RFC 5280 asks). */
function utcTime(at: Date): Buffer {
  return tlv(0x17, Buffer.from(at.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z'));
}

/**
 * A P-256 key and a self-signed certificate for `cn` (PEM), made with node:crypto alone: the
 * SMTP submission server's STARTTLS when no certificate is configured. Its clients trust it by
 * its fingerprint, which the server logs.
 */
export function selfSignedPair(cn: string, days: number, now = new Date()): { key: string; cert: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const serial = crypto.randomBytes(16);
  serial[0] &= 0x7f;
  const tbs = seq(
    Buffer.from('a003020102', 'hex'),
    tlv(0x02, serial),
    ECDSA_SHA256,
    name(cn),
    seq(utcTime(now), utcTime(new Date(now.getTime() + days * 86_400_000))),
    name(cn),
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = crypto.sign('sha256', tbs, privateKey);
  const der = seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const cert = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  return { key: String(privateKey.export({ type: 'pkcs8', format: 'pem' })), cert };
}
