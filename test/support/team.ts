import type { TeamRole } from '../../src/lib/constants';
import type { Harness, TestAccount } from './harness';
import type { SmtpSink } from './smtp';
import { PASSWORD, signIn, WebClient } from './web';

/** The token of the newest link of this kind (`invitation` or `reset-password`) mailed to `address`. */
export async function linkToken(sink: SmtpSink, address: string, kind: 'invitation' | 'reset-password'): Promise<string> {
  const mails = sink.messages.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase()));
  const text = String(mails[mails.length - 1]?.parsed.text ?? '');
  const match = new RegExp(`/${kind}/([\\w-]+)`).exec(text);
  if (!match) throw new Error(`no ${kind} link in the last mail to ${address}`);
  return match[1];
}

let seq = 0;

/** A person of the account with this role, invited by the owner through the API, who accepted with PASSWORD. */
export async function addMember(h: Harness, sink: SmtpSink, account: TestAccount, role: Exclude<TeamRole, 'owner'>, email?: string): Promise<{ id: number; email: string }> {
  seq += 1;
  const address = email ?? `${role}${seq}.${process.pid}@team.example`;
  await h.api(account).post('/users/invite').send({ email: address, role, name: `${role} ${seq}` }).expect(200);
  const member = await h.runtime.services.teamUsers.acceptInvitation(await linkToken(sink, address, 'invitation'), { password: PASSWORD, password_confirmation: PASSWORD });
  if (!member) throw new Error('the invitation did not work');
  return { id: member.id, email: address };
}

/** A dashboard client signed in as this person. */
export function signInMember(h: Harness, account: TestAccount, email: string): Promise<WebClient> {
  return signIn(h, { ...account, email });
}

/** An API key pair with this role, made by the owner; headers ready for supertest. */
export async function addRoleKey(h: Harness, account: TestAccount, role: TeamRole): Promise<TestAccount> {
  const res = await h.api(account).post('/api-keys/save').send({ name: `${role} key`, role }).expect(200);
  const key = res.body.message.apiKey;
  return { ...account, public_key: key.public_key, secret_key: key.secret_key, headers: { PublicKey: key.public_key, SecretKey: key.secret_key } };
}
