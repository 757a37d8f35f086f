import { describe, expect, it } from 'vitest';
import { issuesFrom, locationOf } from '../../src/http/validation.js';
import { toMicros, fromMicros } from '../../src/money/index.js';
import { newId, newSecret, randomBase62 } from '../../src/ids.js';

describe('validation error mapping', () => {
  it('turns validator paths into locations', () => {
    expect(locationOf('/body/text/3')).toEqual(['body', 'text', 3]);
    expect(locationOf('.body.text[3]')).toEqual(['body', 'text', 3]);
    expect(locationOf('.query.limit')).toEqual(['query', 'limit']);
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
