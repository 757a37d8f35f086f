import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { fromDatabaseError, sqlStateOf } from '../db/errors.js';
import { ApiError, errors } from '../errors.js';
import { fromValidatorError, isValidatorError } from './validation.js';

/** An error in http-errors' shape, as body-parser, raw-body and the router throw them. */
interface HttpError {
  status: number;
  expose?: boolean;
  message: string;
  type?: string;
  code?: string;
  encoding?: string;
  charset?: string;
}

const isHttpError = (err: unknown): err is HttpError =>
  err instanceof Error && typeof (err as Partial<HttpError>).status === 'number';

/** zlib's codes (Z_DATA_ERROR, Z_BUF_ERROR, ...) and brotli's (ERR__ERROR_FORMAT_..., ERR_BROTLI_...). */
const isDecompressionError = (err: HttpError) => /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(err.code ?? '');

/** A request whose framing or body cannot be read at all: what was wrong, never a 500. */
function fromUnreadableRequest(err: HttpError, contentEncoding: string | undefined): ApiError | undefined {
  if (isDecompressionError(err)) {
    return errors.invalid([
      {
        loc: ['body'],
        msg: `the body is not valid ${contentEncoding} data (Content-Encoding: ${contentEncoding}): ${err.message}`,
        type: 'encoding_invalid',
      },
    ]);
  }
  switch (err.type) {
    case 'entity.parse.failed':
      return errors.invalid([{ loc: ['body'], msg: `the body is not valid JSON: ${err.message}`, type: 'json_invalid' }]);
    case 'encoding.unsupported':
      return errors.invalid([
        {
          loc: ['header', 'Content-Encoding'],
          msg: `the body is encoded as ${err.encoding ?? contentEncoding}; send it as identity, gzip, deflate or br`,
          type: 'unsupported_encoding',
        },
      ]);
    case 'charset.unsupported':
      return errors.invalid([
        { loc: ['header', 'Content-Type'], msg: `the charset ${err.charset} is not supported; send utf-8`, type: 'unsupported_charset' },
      ]);
    case 'entity.too.large':
      return errors.payloadTooLarge('the request body is too large');
    case 'parameters.too.many':
      return errors.payloadTooLarge('the form has too many fields');
    case 'request.size.invalid':
      return errors.badRequest('the body is not as long as its Content-Length says');
  }
  // Other client errors of http-errors (expose: their message is meant for the client).
  if (err.expose && err.status >= 400 && err.status < 500) return errors.badRequest(err.message);
  return undefined;
}

/** Turns anything thrown into the error the client may see; only ApiErrors speak for themselves. */
export function toApiError(
  err: unknown,
  req: { method: string; path: string; requestId: string; headers: Record<string, string | string[] | undefined> },
): ApiError {
  if (err instanceof ApiError) return err;
  // A path parameter that does not decode (./dispatch.ts).
  if (err instanceof URIError) return errors.badRequest(`the path is not valid percent-encoding: ${err.message}`);
  if (isValidatorError(err)) {
    const mapped = fromValidatorError(err, req);
    if (mapped) return mapped;
  }
  if (isHttpError(err)) {
    const mapped = fromUnreadableRequest(err, String(req.headers['content-encoding'] ?? ''));
    if (mapped) return mapped;
  }
  return fromDatabaseError(err) ?? errors.internal(req.requestId);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err, req);
    if (apiError.status >= 500 && apiError.status !== 502) {
      logger.error({ err, requestId: req.requestId }, 'request failed');
    } else if (apiError.status < 500 && sqlStateOf(err)) {
      // The database's own checks answered: worth a look, as an input check may be missing.
      logger.warn({ err, requestId: req.requestId }, 'the database refused a value');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(apiError.status).set(apiError.headers).json({ ...apiError.fields, detail: apiError.detail });
  };
}
