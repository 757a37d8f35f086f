import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { matchTemplate, middlewareChain, pathTemplate, requestSegments } from '../../src/http/dispatch.js';

const match = (template: string, path: string) => matchTemplate(pathTemplate(template), requestSegments(path));

describe('operation paths', () => {
  it('matches literals case-insensitively, ignores a trailing slash and decodes parameters', () => {
    expect(match('/v1/calls/{call_id}/sides', '/V1/Calls/call_1/sides/')).toEqual({ call_id: 'call_1' });
    expect(match('/v1/sessions/{session_id}', '/v1/sessions/a%2Fb%20c')).toEqual({ session_id: 'a/b c' });
    expect(match('/healthz', '/healthz')).toEqual({});
  });

  it('does not match another shape, an empty parameter or another literal', () => {
    expect(match('/v1/calls/{call_id}', '/v1/calls')).toBeUndefined();
    expect(match('/v1/calls/{call_id}', '/v1/calls/a/b')).toBeUndefined();
    expect(match('/v1/calls/{call_id}/end', '/v1/calls//end')).toBeUndefined();
    expect(match('/v1/calls/{call_id}/end', '/v1/calls/x/start')).toBeUndefined();
  });

  it('throws URIError for a parameter that is not valid percent-encoding, once the literals fit', () => {
    expect(() => match('/v1/sessions/{session_id}', '/v1/sessions/%E0%A4%A')).toThrow(URIError);
    expect(match('/v1/calls/{call_id}', '/v1/sessions/%E0%A4%A')).toBeUndefined();
  });
});

/** Runs a chain on a dummy request and reports how it ended. */
function run(middlewares: Array<RequestHandler | ErrorRequestHandler>): Promise<{ steps: string[]; ended: unknown }> {
  const steps: string[] = [];
  const req = { steps } as unknown as Request;
  return new Promise((resolve) => {
    const done: NextFunction = (err?: unknown) => resolve({ steps, ended: err });
    middlewareChain(middlewares)(req, {} as Response, done);
  });
}

const step = (name: string): RequestHandler => (req, _res, next) => {
  (req as unknown as { steps: string[] }).steps.push(name);
  next();
};

describe('middleware chain', () => {
  it('runs middlewares in order and ends with nothing when all go on', async () => {
    expect(await run([step('a'), step('b')])).toEqual({ steps: ['a', 'b'], ended: undefined });
  });

  it('skips to the next error handler on next(err), a throw or a rejected promise, and hands on what it passes', async () => {
    const failure = new Error('no');
    const recover: ErrorRequestHandler = (err, req, _res, next) => {
      (req as unknown as { steps: string[] }).steps.push(`recovered ${(err as Error).message}`);
      next(new Error('mapped'));
    };
    const failures: RequestHandler[] = [
      (_req, _res, next) => next(failure),
      () => {
        throw failure;
      },
      async () => {
        throw failure;
      },
    ];
    for (const fail of failures) {
      const { steps, ended } = await run([step('a'), fail, step('skipped'), recover, step('also skipped')]);
      expect(steps).toEqual(['a', 'recovered no']);
      expect((ended as Error).message).toBe('mapped');
    }
  });

  it('takes next(null) as going on, and passes an error handler by when nothing failed', async () => {
    const unused: ErrorRequestHandler = (_err, req, _res, next) => {
      (req as unknown as { steps: string[] }).steps.push('error handler');
      next();
    };
    const goOn: RequestHandler = (_req, _res, next) => next(null);
    expect(await run([goOn, unused, step('b')])).toEqual({ steps: ['b'], ended: undefined });
  });
});
