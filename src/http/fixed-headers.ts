import type { RequestHandler } from 'express';

type HeaderStep = { set: string; value: string | number | readonly string[] } | { remove: string };

/**
 * A middleware that sets the same headers on every response (helmet's, with no per-request
 * directives), run once against a recording response: each request then gets the recorded
 * `setHeader`/`removeHeader` calls replayed in order, without the middleware's own work
 * (helmet walks a dozen middleware and builds the CSP string on every request). When the
 * middleware reads the request or the response, or does not go on at once, it is kept as it is.
 */
export function fixedHeaders(middleware: RequestHandler): RequestHandler {
  const steps = record(middleware);
  if (!steps) return middleware;
  return (_req, res, next) => {
    for (const step of steps) {
      if ('set' in step) res.setHeader(step.set, step.value);
      else res.removeHeader(step.remove);
    }
    next();
  };
}

function record(middleware: RequestHandler): HeaderStep[] | undefined {
  const steps: HeaderStep[] = [];
  let readSomething = false;
  const touched = () => {
    readSomething = true;
    return undefined;
  };
  const res = new Proxy(
    {
      setHeader: (name: string, value: string | number | readonly string[]) => void steps.push({ set: name, value }),
      removeHeader: (name: string) => void steps.push({ remove: name }),
    },
    { get: (target, key) => (key === 'setHeader' || key === 'removeHeader' ? target[key] : touched()) },
  );
  const req = new Proxy({}, { get: touched });
  let wentOn = false;
  let failed = false;
  try {
    middleware(req as never, res as never, (err?: unknown) => {
      wentOn = true;
      failed = Boolean(err);
    });
  } catch {
    return undefined;
  }
  return wentOn && !failed && !readSomething ? steps : undefined;
}
