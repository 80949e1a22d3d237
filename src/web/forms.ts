import type { RequestHandler } from 'express';
import { field, validate } from '../http/validation';

/**
 * A textarea of addresses may hold one per line; the shared rule (`addressList`, read with
 * splitAddresses) takes them comma-separated, as the API does.
 */
export function linesToCommas(name: string): RequestHandler {
  return (req, _res, next) => {
    const value = req.body?.[name];
    if (typeof value === 'string') req.body[name] = value.replace(/\r?\n/g, ',');
    next();
  };
}

/** The `email_address` textarea of the unsubscribe pages, checked by the API's address-list rule. */
export function addressListInput(): RequestHandler[] {
  return [linesToCommas('email_address'), validate(field('email_address').required().addressList())];
}

/** "Address added." or "3 addresses added." */
export function counted(n: number, one: string, many: string, verb: string): string {
  return n === 1 ? `${one} ${verb}.` : `${n} ${many} ${verb}.`;
}

/** Checkbox groups arrive as one string when one box is ticked: make them lists, as the API takes them. */
export function listFields(...names: string[]): RequestHandler {
  return (req, _res, next) => {
    for (const name of names) {
      const value = req.body?.[name];
      if (typeof value === 'string') req.body[name] = [value];
    }
    next();
  };
}

/**
 * Checkboxes of a form that holds a record's whole state: a box left unticked sends nothing,
 * which the API reads as "unchanged", so here it is said as 0 (and a ticked one as 1).
 */
export function checkboxFields(...names: string[]): RequestHandler {
  return (req, _res, next) => {
    for (const name of names) if (req.body && typeof req.body === 'object') req.body[name] = req.body[name] === '1' ? '1' : '0';
    next();
  };
}
