import type { Request } from 'express';
import type { Account } from '../services/accounts/accounts';
import type { Ctx } from '../services/context';
import './actor';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by the API-key middleware. */
      account?: Account;
    }
  }
}

/** The account scope of an authenticated request. */
export function ctxOf(req: Request): Ctx {
  if (!req.account) throw new Error('ctxOf called on a request without an account');
  return { userId: req.account.id, actor: req.actor, ip: req.ip ?? null };
}
