import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const DOVECOT = '/usr/sbin/dovecot';

export interface Dovecot {
  port: number;
  /** imap://user:password@127.0.0.1:port/INBOX */
  url: string;
  user: string;
  password: string;
  stop(): Promise<void>;
}

/** A port of 127.0.0.1 nobody listens on (taken, then given back). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function uidOf(name: string): { uid: number; gid: number } {
  return { uid: Number(execFileSync('id', ['-u', name]).toString().trim()), gid: Number(execFileSync('id', ['-g', name]).toString().trim()) };
}

/**
 * A real IMAP server for the mailbox tests: Debian's dovecot (dovecot-imapd, installed by
 * `npm test`'s pretest step), run in the foreground with a configuration of its own in a
 * temporary folder, bound to 127.0.0.1 on a free port, one user, maildir storage, no TLS
 * (or STARTTLS with the given certificate and key files, as Debian's default offers it).
 */
export async function startDovecot(options: { tls?: { cert: string; key: string } } = {}): Promise<Dovecot> {
  if (!fs.existsSync(DOVECOT)) throw new Error(`${DOVECOT} is missing: run scripts/ensure-dovecot.sh (npm test does it first)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dovecot-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const user = 'bounces';
  const password = 'mailbox-password';
  const owner = uidOf('dovecot');
  for (const sub of ['run', 'state', 'mail', 'home']) fs.mkdirSync(path.join(dir, sub), { mode: 0o755 });
  fs.chownSync(path.join(dir, 'mail'), owner.uid, owner.gid);
  fs.chownSync(path.join(dir, 'home'), owner.uid, owner.gid);
  fs.writeFileSync(path.join(dir, 'users'), `${user}:{PLAIN}${password}::::::\n`);
  fs.writeFileSync(
    path.join(dir, 'dovecot.conf'),
    [
      `base_dir = ${dir}/run`,
      `state_dir = ${dir}/state`,
      `log_path = ${dir}/dovecot.log`,
      'protocols = imap',
      'listen = 127.0.0.1',
      ...(options.tls ? ['ssl = yes', `ssl_cert = <${options.tls.cert}`, `ssl_key = <${options.tls.key}`] : ['ssl = no']),
      'disable_plaintext_auth = no',
      'auth_mechanisms = plain login',
      `first_valid_uid = ${owner.uid}`,
      `mail_location = maildir:${dir}/mail/%u`,
      'default_login_user = dovenull',
      'default_internal_user = dovecot',
      `passdb {\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u ${dir}/users\n}`,
      `userdb {\n  driver = static\n  args = uid=${owner.uid} gid=${owner.gid} home=${dir}/home/%u\n}`,
      `service imap-login {\n  inet_listener imap {\n    address = 127.0.0.1\n    port = ${port}\n  }\n  inet_listener imaps {\n    port = 0\n  }\n}`,
      'service anvil {\n  chroot =\n}',
      'service imap-login {\n  chroot =\n}',
      'service pop3-login {\n  chroot =\n}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(DOVECOT, ['-F', '-c', path.join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Ready when the port answers with the IMAP greeting.
  const greeting = async (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('* OK'));
      });
      socket.once('error', () => resolve(false));
    });
  for (let i = 0; i < 200 && child.exitCode === null; i += 1) {
    if (await greeting()) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  if (child.exitCode !== null) throw new Error(`dovecot did not start: ${output}${fs.existsSync(path.join(dir, 'dovecot.log')) ? fs.readFileSync(path.join(dir, 'dovecot.log'), 'utf8') : ''}`);

  return {
    port,
    url: `imap://${user}:${password}@127.0.0.1:${port}/INBOX`,
    user,
    password,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
