import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

/** A key and self-signed certificate for `cn`, made by the openssl command line in `dir`. */
export function selfSignedCertificate(dir: string, cn: string): { key: Buffer; cert: Buffer } {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${cn}`, '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
  return { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
}

/** What an SMTP server with its own certificate received, and whether over TLS. */
export interface TlsReceived {
  to: string;
  secure: boolean;
}

/**
 * An SMTP server on 127.0.0.1 with the given certificate (Debian's Postfix default: STARTTLS
 * offered with a snakeoil certificate), or one that speaks TLS from the first byte (`secure`);
 * with `login`, it takes that user name and password (and refuses others).
 */
export async function startTlsSmtpServer(cert: { key: Buffer; cert: Buffer }, options: { secure?: boolean; login?: { user: string; password: string } } = {}) {
  const received: TlsReceived[] = [];
  const { login } = options;
  const server = new SMTPServer({
    ...cert,
    secure: options.secure ?? false,
    disableReverseLookup: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (login && auth.username === login.user && auth.password === login.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), secure: Boolean(session.secure) });
        callback();
      });
    },
  });
  // A failed handshake is the client's to report; the server only notes it.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const credentials = login ? `${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@` : '';
  return { received, url: `smtp://${credentials}127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
