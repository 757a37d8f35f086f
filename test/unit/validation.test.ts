import { describe, expect, it } from 'vitest';
import { errors, MAX_LISTED_ISSUES, type ValidationIssue } from '../../src/errors.js';
import { issuesFrom, locationOf } from '../../src/http/validation.js';
import { toMicros, fromMicros } from '../../src/money/index.js';
import { newId, newSecret, randomBase62 } from '../../src/lib/ids.js';

describe('validation error mapping', () => {
  it('turns validator paths into locations', () => {
    expect(locationOf('/body/text/3')).toEqual(['body', 'text', 3]);
    expect(locationOf('.body.text[3]')).toEqual(['body', 'text', 3]);
    expect(locationOf('.query.limit')).toEqual(['query', 'limit']);
    expect(locationOf('/params/message_id')).toEqual(['path', 'message_id']);
    expect(locationOf('/headers/x-call-key')).toEqual(['header', 'x-call-key']);
  });

  it('keeps every problem with a short type', () => {
    const issues = issuesFrom({
      status: 400,
      message: 'x',
      errors: [
        { path: '/body/target', message: "must have required property 'target'", errorCode: 'required.openapi.validation' },
        { path: '/body/context', message: 'must NOT have more than 500 characters', errorCode: 'maxLength.openapi.validation' },
      ],
    });
    expect(issues).toEqual([
      { loc: ['body', 'target'], msg: "must have required property 'target'", type: 'required' },
      { loc: ['body', 'context'], msg: 'must NOT have more than 500 characters', type: 'maxLength' },
    ]);
  });
});

// What ajv reports for a metadata value that is none of string, number or boolean.
const badMetadataValue = (key: string) => [
  { path: `/body/metadata/${key}`, message: 'must be string', errorCode: 'type.openapi.validation' },
  { path: `/body/metadata/${key}`, message: 'must be number', errorCode: 'type.openapi.validation' },
  { path: `/body/metadata/${key}`, message: 'must be boolean', errorCode: 'type.openapi.validation' },
  { path: `/body/metadata/${key}`, message: 'must match a schema in anyOf', errorCode: 'anyOf.openapi.validation' },
];

describe('alternatives and the cap on listed problems', () => {
  it('collapses the failed alternatives of one value into one issue, keeping inner and other problems', () => {
    const issues = issuesFrom({
      status: 400,
      message: 'x',
      errors: [
        ...badMetadataValue('a'),
        { path: '/body/metadata/long', message: 'must NOT have more than 500 characters', errorCode: 'maxLength.openapi.validation' },
        { path: '/body/metadata/long', message: 'must be number', errorCode: 'type.openapi.validation' },
        { path: '/body/metadata/long', message: 'must be boolean', errorCode: 'type.openapi.validation' },
        { path: '/body/metadata/long', message: 'must match a schema in anyOf', errorCode: 'anyOf.openapi.validation' },
        // An array item with a problem inside: the array had the right type, so only the item is reported.
        { path: '/body/list/1', message: 'must be string', errorCode: 'type.openapi.validation' },
        { path: '/body/list', message: 'must be string', errorCode: 'type.openapi.validation' },
        { path: '/body/list', message: 'must match a schema in anyOf', errorCode: 'anyOf.openapi.validation' },
        { path: '/body/target', message: "must have required property 'target'", errorCode: 'required.openapi.validation' },
      ],
    });
    expect(issues).toEqual([
      { loc: ['body', 'metadata', 'a'], msg: 'must be string, number or boolean', type: 'type' },
      { loc: ['body', 'metadata', 'long'], msg: 'must NOT have more than 500 characters', type: 'maxLength' },
      { loc: ['body', 'list', 1], msg: 'must be string', type: 'type' },
      { loc: ['body', 'target'], msg: "must have required property 'target'", type: 'required' },
    ]);
  });

  it('lists the first 100 problems and says how many more there were', () => {
    const issues = (count: number): ValidationIssue[] =>
      Array.from({ length: count }, (_, i) => ({ loc: ['body', 'metadata', `k${i}`], msg: 'must be string', type: 'type' }));
    expect(MAX_LISTED_ISSUES).toBe(100);
    expect(errors.invalid(issues(100)).detail).toEqual(issues(100));
    const capped = errors.invalid(issues(101)).detail as ValidationIssue[];
    expect(capped).toHaveLength(101);
    expect(capped.slice(0, 100)).toEqual(issues(100));
    expect(capped[100]).toEqual({ loc: [], msg: '1 more problem not listed; fix these and send again', type: 'too_many_errors' });
  });

  it('turns 10,000 bad values (40,000 validator errors) into exactly 101 items', () => {
    const validatorErrors = [
      { path: '/body/metadata', message: 'must NOT have more than 50 properties', errorCode: 'maxProperties.openapi.validation' },
      ...Array.from({ length: 10_000 }, (_, i) => badMetadataValue(`k${i}`)).flat(),
    ];
    const issues = issuesFrom({ status: 400, message: 'x', errors: validatorErrors });
    expect(issues).toHaveLength(10_001);
    const detail = errors.invalid(issues).detail as ValidationIssue[];
    expect(detail).toHaveLength(101);
    expect(detail[0]).toEqual({ loc: ['body', 'metadata'], msg: 'must NOT have more than 50 properties', type: 'maxProperties' });
    expect(detail[99]).toEqual({ loc: ['body', 'metadata', 'k98'], msg: 'must be string, number or boolean', type: 'type' });
    expect(detail[100]).toEqual({ loc: [], msg: '9901 more problems not listed; fix these and send again', type: 'too_many_errors' });
  });
});

describe('money and identifiers', () => {
  it('converts amounts to exact micro-units', () => {
    expect(toMicros(0.1)).toBe(100_000);
    expect(toMicros(12.345678)).toBe(12_345_678);
    expect(toMicros(-0.05)).toBe(-50_000);
    expect(fromMicros(1_250_001)).toBe(1.250001);
  });

  it('makes prefixed random identifiers and secrets', () => {
    expect(newId('call')).toMatch(/^call_[0-9A-Za-z]{16}$/);
    expect(newSecret('spk_live_')).toMatch(/^spk_live_[0-9A-Za-z]{40}$/);
    const sample = randomBase62(62 * 200);
    expect(new Set(sample).size).toBe(62);
  });
});
