// The operations' own dispatch: which operation a request is for, and running that operation's
// middlewares in order. Express's router did both before, but it tried every route of a group by
// regular expression and paid its layer machinery (parameter processing, prefix trimming, several
// closures) at every step of every request: about a tenth of a light request's CPU. Express still
// serves everything else (pages, console, docs) and its request and response objects are used as before.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

/** A contract path split into its segments: literal text, or the name of a path parameter. */
type Segment = { literal: string } | { parameter: string };

export interface PathTemplate {
  segments: Segment[];
}

/** `/v1/calls/{call_id}/sides` -> literal v1, literal calls, parameter call_id, literal sides. */
export function pathTemplate(path: string): PathTemplate {
  return {
    segments: path
      .split('/')
      .slice(1)
      .map((part) => {
        const parameter = /^\{([^}]+)\}$/.exec(part);
        return parameter ? { parameter: parameter[1] } : { literal: part.toLowerCase() };
      }),
  };
}

const TRAILING_SLASHES = /\/+$/;

/**
 * The request path's segments as routes compare them: a trailing slash ignored, as Express's
 * non-strict routing did ("/v1/account/" is "/v1/account"). Literals compare case-insensitively.
 */
export function requestSegments(path: string): string[] {
  return path.replace(TRAILING_SLASHES, '').split('/').slice(1);
}

/**
 * The path parameters of the request if its path fits the template, each percent-decoded; undefined when
 * it does not fit. A parameter that is not valid percent-encoding throws URIError (answered 400).
 */
export function matchTemplate(template: PathTemplate, segments: string[]): Record<string, string> | undefined {
  if (segments.length !== template.segments.length) return undefined;
  for (let index = 0; index < segments.length; index++) {
    const expected = template.segments[index];
    const actual = segments[index];
    if ('literal' in expected ? actual.toLowerCase() !== expected.literal : actual === '') return undefined;
  }
  const params: Record<string, string> = {};
  for (let index = 0; index < segments.length; index++) {
    const expected = template.segments[index];
    if ('parameter' in expected) params[expected.parameter] = decodeParameter(segments[index]);
  }
  return params;
}

const decodeParameter = (value: string) => (value.includes('%') ? decodeURIComponent(value) : value);

type Middleware = RequestHandler | ErrorRequestHandler;

/**
 * Runs middlewares in order as an Express route would: `next(err)` skips to the next error handler
 * (a function of four arguments), a thrown error or a rejected promise is `next(err)`, and what is left
 * at the end goes to `done`.
 */
export function middlewareChain(middlewares: Middleware[]): (req: Request, res: Response, done: NextFunction) => void {
  return (req, res, done) => {
    let index = 0;
    const fail = (failure: unknown) => next(failure ?? new Error('a middleware failed without a reason'));
    const next = (err?: unknown): void => {
      // As Express: any falsy argument (undefined, null) means "go on".
      const failing = Boolean(err);
      while (index < middlewares.length) {
        const middleware = middlewares[index++];
        if ((middleware.length === 4) !== failing) continue;
        try {
          const result: unknown = failing
            ? (middleware as ErrorRequestHandler)(err, req, res, next)
            : (middleware as RequestHandler)(req, res, next);
          if (result instanceof Promise) result.catch(fail);
        } catch (failure) {
          fail(failure);
        }
        return;
      }
      done(failing ? err : undefined);
    };
    next();
  };
}
