import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** A real OpenID Connect provider in a child process (oidc-provider is ES-module only). */
export interface OidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the provider next. */
  nextLogin(person: { sub: string; email: string; email_verified?: boolean; name?: string }): Promise<void>;
  /** The next ID token is re-signed with the provider's key for another audience, or expired; or signed with a key it never published. */
  tamper(mode: 'audience' | 'expired' | 'unpublished-key'): Promise<void>;
}

/** Starts the provider before the file's tests and stops it after them; `redirectUri` is the app's callback. */
export function useOidcProvider(redirectUri: string): OidcProvider {
  const p = { clientId: 'campaigns-dashboard', clientSecret: 'a-client-secret-for-tests', issuer: '' } as OidcProvider;
  let child: ChildProcess | undefined;
  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${p.issuer}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 204) throw new Error(`${route}: ${res.status}`);
  };
  p.nextLogin = (person) => post('/test/login', { email_verified: true, name: person.email, ...person });
  p.tamper = (mode) => post('/test/tamper', { mode });

  beforeAll(async () => {
    child = spawn(process.execPath, [path.join(__dirname, 'oidc-provider.mjs')], {
      env: { ...process.env, CLIENT_ID: p.clientId, CLIENT_SECRET: p.clientSecret, REDIRECT_URI: redirectUri },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    p.issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (chunk) => {
        out += String(chunk);
        const ready = /READY (\S+)\n/.exec(out);
        if (ready) resolve(ready[1]);
      });
      child!.on('exit', (code) => reject(new Error(`the OpenID provider stopped (${code})`)));
    });
  });

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  return p;
}
