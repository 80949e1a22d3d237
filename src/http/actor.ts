import type { Account } from '../services/accounts/accounts';
import type { Actor } from '../services/context';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Who is making the request, set with the account by the key check or the session (the audit log names them). */
      actor?: Actor;
    }
  }
}

/** The account's original key pair (`PublicKey`/`SecretKey`): a key without an id of its own. */
export function originalKeyActor(): Actor {
  return { type: 'api_key', id: null, name: 'Account API key' };
}

/** The person signed in to the dashboard with the account's own email and password. */
export function accountUserActor(account: Pick<Account, 'email'>): Actor {
  return { type: 'user', id: null, name: account.email };
}
