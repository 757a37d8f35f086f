import type { ErrorRequestHandler } from 'express';
import { ApiError, errors } from '../errors.js';
import { fromValidatorError, isValidatorError } from './validation.js';

interface BodyParserError {
  type: string;
  status: number;
  message: string;
}

const isBodyParserError = (err: unknown): err is BodyParserError =>
  typeof err === 'object' && err !== null && typeof (err as BodyParserError).type === 'string' &&
  typeof (err as BodyParserError).status === 'number';

/** Turns anything thrown into the error the client may see; only ApiErrors speak for themselves. */
export function toApiError(err: unknown, method: string, path: string, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  if (isValidatorError(err)) {
    const mapped = fromValidatorError(err, method, path);
    if (mapped) return mapped;
  }
  if (isBodyParserError(err)) {
    if (err.type === 'entity.parse.failed') {
      return errors.invalid([{ loc: ['body'], msg: `the body is not valid JSON: ${err.message}`, type: 'json_invalid' }]);
    }
    if (err.type === 'entity.too.large') return errors.payloadTooLarge('the request body is too large');
    if (err.status >= 400 && err.status < 500) return errors.badRequest(err.message);
  }
  return errors.internal(requestId);
}

export function errorHandler(): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err, req.method, req.path, req.requestId);
    if (apiError.status >= 500 && apiError.status !== 501 && apiError.status !== 502) {
      req.log.error({ err, requestId: req.requestId }, 'request failed');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(apiError.status).set(apiError.headers).json({ detail: apiError.detail });
  };
}
