import type { Request } from 'express';
import type { Account } from '../services/accounts/accounts';
import type { Actor, Ctx, RouteScope } from '../services/context';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by the API-key middleware and the dashboard's session check. */
      account?: Account;
      /** Which person or key of the account made the request, with its role; set with `account`. */
      actor?: Actor;
      /** The route that answers the request, set by its route table after the permission check. */
      routeScope?: RouteScope;
    }
  }
}

/** The account scope of an authenticated request, with who made it. */
export function ctxOf(req: Request): Ctx {
  if (!req.account) throw new Error('ctxOf called on a request without an account');
  // The client's address goes with the actor: the audit log records both.
  const ctx: Ctx = req.actor ? { userId: req.account.id, actor: req.actor, ip: req.ip ?? null } : { userId: req.account.id, ip: req.ip ?? null };
  if (req.routeScope) ctx.route = req.routeScope;
  return ctx;
}

/** Who made an authenticated request. */
export function actorOf(req: Request): Actor {
  if (!req.actor) throw new Error('actorOf called on a request without an actor');
  return req.actor;
}
