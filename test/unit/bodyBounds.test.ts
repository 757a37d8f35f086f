// The bounds of a JSON body, counted on its bytes before it is parsed (src/http/bodyBounds.ts): the
// counts must be those of the parsed body, whatever the JSON's spacing, escapes and nesting.
import { describe, expect, it } from 'vitest';
import { bodyBounds, closestName, type BodyBounds } from '../../src/http/bodyBounds.js';

const createCall = bodyBounds({ method: 'post', path: '/v1/calls' })!;
const translate = bodyBounds({ method: 'post', path: '/v1/translate' })!;
const exceeded = (bounds: BodyBounds, text: string) => bounds.exceededInJson(Buffer.from(text, 'utf8'));

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(items: readonly T[]) => items[int(items.length)] };
}

const TRICKY_STRINGS = ['plain', 'with "quotes"', 'back\\slash\\', '{[,:]}', 'é ü 日本 😀', '\\"', 'line\nbreak', '\u0001', ''];

describe('bounds counted on the bytes of a JSON body', () => {
  it('counts what parsing counts: metadata keys, unknown fields and list items, however the JSON is written', () => {
    const rng = random(20261127);
    for (let round = 0; round < 400; round++) {
      const metadataKeys = rng.int(80);
      const unknown = rng.int(30);
      const metadata: Record<string, unknown> = {};
      for (let i = 0; i < metadataKeys; i++) metadata[`${rng.pick(TRICKY_STRINGS)}${i}`] = rng.pick<unknown>([1, 'x', rng.pick(TRICKY_STRINGS), null, true, [1, [2, { a: '}' }]], { nested: { '"': ']' } }]);
      const body: Record<string, unknown> = { agent_language: 'en', metadata };
      for (let i = 0; i < unknown; i++) body[`${rng.pick(TRICKY_STRINGS)}u${i}`] = rng.pick<unknown>([[], {}, 'v', 0.5e-3, [[[]]]]);
      const spaced = rng.int(2) === 0 ? JSON.stringify(body) : JSON.stringify(body, null, rng.pick([1, 2, '\t']));
      // Escapes that JSON.stringify would not write: the bytes differ, the parsed body does not.
      const text = rng.int(3) === 0 ? spaced.replace(/"agent_language"/, '"agent\\u005flanguage"') : spaced;
      const expected = [
        ...(metadataKeys > 50 ? [{ loc: ['body', 'metadata'], type: 'too_many_properties' }] : []),
        ...(unknown > 20 ? [{ loc: ['body'], type: 'too_many_unknown_fields' }] : []),
      ];
      expect(
        exceeded(createCall, text).map(({ loc, type }) => ({ loc, type })),
        text.slice(0, 200),
      ).toEqual(expected);
    }
  });

  it('says how many there were, names the first unknown fields and the fields taken', () => {
    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect(exceeded(createCall, JSON.stringify({ agent_language: 'en', metadata }))).toEqual([
      { loc: ['body', 'metadata'], msg: 'must have at most 50 keys; it has 51', type: 'too_many_properties' },
    ]);
    const fields = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, i]));
    expect(exceeded(createCall, JSON.stringify({ ...fields, agent_language: 'en' }))).toEqual([
      {
        loc: ['body'],
        msg: 'has 21 fields it does not take (f0, f1, f2, ...); it takes agent_language, agent_name, customer_language, customer_name, external_id, metadata, video, transcript, retention_days',
        type: 'too_many_unknown_fields',
      },
    ]);
    // Within the bounds: nothing, whatever else is wrong (the validator says that).
    expect(exceeded(createCall, JSON.stringify({ ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, i])), metadata: { a: [] } }))).toEqual([]);
  });

  it('counts the list of texts of a translation, not its string form, and every bound broken in one body', () => {
    expect(exceeded(translate, JSON.stringify({ target: 'fi', text: 'x'.repeat(20_000) }))).toEqual([]);
    expect(exceeded(translate, JSON.stringify({ target: 'fi', text: Array.from({ length: 101 }, () => 'a,b') }))).toEqual([
      { loc: ['body', 'text'], msg: 'must have at most 100 items; it has 101', type: 'too_many_items' },
    ]);
    const glossary = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`t${i}`, 'x']));
    expect(exceeded(translate, JSON.stringify({ target: 'fi', text: Array.from({ length: 200 }, () => 1), glossary })).map((issue) => issue.type)).toEqual([
      'too_many_items',
      'too_many_properties',
    ]);
  });

  it('stops without a finding at JSON it cannot read, for the parser to refuse', () => {
    for (const text of ['{"agent_language":"en', '{"metadata":{"a', '[', '}}}]]]', '', 'nul', '{"a":"\\']) {
      expect(exceeded(createCall, text), text).toEqual([]);
    }
  });
});

describe('unknown fields and the field probably meant', () => {
  const fields = ['agent_language', 'agent_name', 'customer_language', 'customer_name', 'external_id', 'metadata', 'video'];

  it('finds a field within a few typing mistakes, a swap counting as one', () => {
    expect(closestName('custmer_language', fields)).toBe('customer_language');
    expect(closestName('agent_langauge', fields)).toBe('agent_language');
    expect(closestName('Metadata', fields)).toBe('metadata');
    expect(closestName('vdieo', fields)).toBe('video');
    expect(closestName('colour', fields)).toBeUndefined();
    expect(closestName('id', fields)).toBeUndefined();
  });

  it('names unknown fields of a parsed body and free-form keys too long, where they are', () => {
    expect(createCall.fieldIssues('application/json', { agent_language: 'en', custmer_name: 'x', metadata: { ['k'.repeat(41)]: 1, ok: 1 } })).toEqual([
      { loc: ['body', 'custmer_name'], msg: 'unknown field; did you mean customer_name?', type: 'unknown_field' },
      { loc: ['body', 'metadata', 'k'.repeat(41)], msg: 'its name must be at most 40 characters long', type: 'key_too_long' },
    ]);
  });
});
