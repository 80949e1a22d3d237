import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { FieldErrors, UnauthorizedError } from '../lib/errors';
import type { AccountsService } from '../services/accounts/accounts';

/**
 * `PublicKey` and `SecretKey` headers: a missing one is a 401 with the reference's field
 * errors; a wrong pair (or a deleted account's) is a 401 "Invalid API keys".
 */
export function requireApiKeys(accounts: AccountsService): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const publicKey = req.get('PublicKey')?.trim();
    const secretKey = req.get('SecretKey')?.trim();
    const missing: FieldErrors = {};
    if (!publicKey) missing.PublicKey = ['The public key field is required.'];
    if (!secretKey) missing.SecretKey = ['The secret key field is required.'];
    if (Object.keys(missing).length > 0) throw new UnauthorizedError(missing);
    const holder = await accounts.authenticate(publicKey!, secretKey!);
    if (!holder) throw new UnauthorizedError('Invalid API keys');
    const { actor, ...account } = holder;
    req.account = account;
    req.actor = actor;
    next();
  };
}
