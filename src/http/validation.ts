import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { AppContext } from '../appContext.js';
import { errors, type ValidationIssue } from '../errors.js';
import { contractCopy } from './contract.js';

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/**
 * The contract's request validator (every problem at once) and, when configured, its response
 * validator: a handler answering outside the contract then fails with a 500, which tests catch.
 */
export function contractValidator(app: AppContext): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: withoutExamples(contractCopy()) as never,
    validateApiSpec: true,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: true },
    validateResponses: app.config.validateResponses ? { allErrors: true } : false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: true,
    fileUploader: { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1 } },
  }) as RequestHandler[];
}

/**
 * Examples are documentation, not rules; the validator's schema compiler would otherwise read the `id`
 * fields of example objects as schema identifiers and refuse them as duplicates.
 */
function withoutExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'example' && key !== 'examples')
      .map(([key, value]) => [key, withoutExamples(value)]),
  );
}

interface ValidatorErrorItem {
  path: string;
  message: string;
  errorCode?: string;
}

export interface ValidatorError {
  status: number;
  message: string;
  errors?: ValidatorErrorItem[];
}

export function isValidatorError(err: unknown): err is ValidatorError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as ValidatorError).status === 'number' &&
    Array.isArray((err as ValidatorError).errors)
  );
}

/** `/body/text/3` or `.body.text[3]` -> ['body', 'text', 3]. */
export function locationOf(path: string): Array<string | number> {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .split(/[./]/)
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** `required.openapi.validation` -> `required`. */
const issueType = (errorCode?: string) => errorCode?.replace(/\.openapi\.(validation|requestValidation)$/, '') ?? 'invalid';

export function issuesFrom(err: ValidatorError): ValidationIssue[] {
  return (err.errors ?? []).map((item) => ({
    loc: locationOf(item.path),
    msg: item.message,
    type: issueType(item.errorCode),
  }));
}

/** The validator's own statuses, mapped to the catalogue (its 400 is our 422). */
export function fromValidatorError(err: ValidatorError, method: string, path: string) {
  switch (err.status) {
    case 400:
      return errors.invalid(issuesFrom(err));
    case 404:
      return errors.routeNotFound(method, path);
    case 413:
      return errors.payloadTooLarge(`the upload is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`);
    case 415:
      return errors.unsupportedMediaType(err.message);
    default:
      return undefined;
  }
}
