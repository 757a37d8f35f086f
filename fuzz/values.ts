// Values for request fields: valid ones built from the contract's schemas (so a request reaches the
// code behind validation), and hostile ones of every kind a careless or malicious client sends.
import type { Schema } from './contract.js';
import type { Random } from './random.js';

/** JSON text put into a body as is: what JSON.stringify cannot produce (1e400, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON.stringify that writes RawJson values verbatim. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, item) => {
    if (item instanceof RawJson) {
      raws.push(item.text);
      return `__fuzz_raw_${raws.length - 1}__`;
    }
    return item;
  });
  return (text ?? 'null').replace(/"__fuzz_raw_(\d+)__"/g, (_match, index) => raws[Number(index)]);
}

const LANGUAGES = ['en', 'fi', 'es', 'de', 'pt-BR', 'ja'];

/** A value the schema accepts, with friendly choices for the fields this contract has. */
export function validValue(schema: Schema, random: Random, name = ''): unknown {
  if (schema.enum) return random.pick(schema.enum);
  if (schema.anyOf || schema.oneOf) return validValue(random.pick(schema.anyOf ?? schema.oneOf), random, name);
  if (schema.nullable && random.chance(0.1)) return null;
  switch (schema.type) {
    case 'string':
      return validString(schema, random, name);
    case 'integer': {
      const min = schema.minimum ?? 0;
      return Math.min(min + random.int(5), schema.maximum ?? Number.MAX_SAFE_INTEGER);
    }
    case 'number':
      return Math.min((schema.minimum ?? 0) + random.int(3) + 0.5, schema.maximum ?? Number.MAX_VALUE);
    case 'boolean':
      return random.chance(0.5);
    case 'array': {
      const count = Math.max(schema.minItems ?? 1, Math.min(schema.maxItems ?? 2, 1 + random.int(2)));
      return Array.from({ length: count }, () => validValue(schema.items ?? {}, random, name));
    }
    default:
      if (schema.type === 'object' || schema.properties) return validObject(schema, random);
      return 'fuzz';
  }
}

function validObject(schema: Schema, random: Random): Record<string, unknown> {
  const required = new Set<string>(schema.required ?? []);
  const result: Record<string, unknown> = {};
  for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) {
    if (property.format === 'binary') continue;
    if (required.has(name) || random.chance(0.5)) result[name] = validValue(property, random, name);
  }
  if (!schema.properties && schema.additionalProperties) result.ticket = 4711;
  return result;
}

function validString(schema: Schema, random: Random, name: string): string {
  if (schema.pattern?.includes('+')) return '+358401234567';
  if (schema.pattern?.includes('[A-Za-z]{3}')) return 'EUR';
  if (/language|^target$|^source$/.test(name) || (schema.minLength === 2 && schema.maxLength === 12)) return random.pick(LANGUAGES);
  if (schema.format === 'uri') return 'https://example.com/x';
  const text = random.pick(['fuzz', 'Hello, how can I help?', 'Hyvää päivää', 'ticket-4711', '日本語のテキスト']);
  return text.slice(0, schema.maxLength ?? text.length).padEnd(schema.minLength ?? 0, 'x');
}

const deepArray = (depth: number) => new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`);
const deepObject = (depth: number) => new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

/** Strings a careless or hostile client sends. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d\ude00\ud83d',
  '\u202eevil\u202c',
  '\u200b\u200d\ufeff',
  '\uffff\ufffe',
  '\u{10ffff}',
  'e\u0301\u0301\u0301',
  '\r\nX-Injected: 1',
  '%00',
  '%E0%A4%A',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  '1e309',
  '-0',
];

const HOSTILE_NUMBERS: readonly number[] = [0, -1, -0, 0.5, 1e300, -1e300, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 2 ** 64, Number.MAX_VALUE, 5e-324];

const RAW_NUMBERS: readonly string[] = ['1e400', '-1e400', '123456789012345678901234567890', '-9223372036854775809', '1.0000000000000000000001'];

/** A value of any kind that is likely wrong where it is put. */
export function hostileValue(random: Random, schema: Schema = {}): unknown {
  return random.oneOf<unknown>([
    () => random.pick(HOSTILE_STRINGS),
    () => random.pick(HOSTILE_NUMBERS),
    () => new RawJson(random.pick(RAW_NUMBERS)),
    () => random.pick([null, true, false, [], {}, [null], { a: {} }]),
    () => 'x'.repeat(random.pick([1_000, 100_000, 600_000])),
    () => (schema.maxLength !== undefined ? 'y'.repeat(schema.maxLength + 1) : 'z'.repeat(5_000)),
    () => (schema.maximum !== undefined ? schema.maximum + 1 : 1e20),
    () => (schema.minimum !== undefined ? schema.minimum - 1 : -1e20),
    () => (schema.enum ? `${schema.enum[0]}-not-one-of-them` : 'not-an-enum'),
    () => random.pick([deepArray(40), deepArray(5_000), deepObject(100)]),
    () => Array.from({ length: 10_000 }, () => null),
    () => Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, { bad: i }])),
  ]);
}

/**
 * A path segment as it goes on the wire: hostile strings percent-encoded (lone surrogates as the bytes
 * a broken encoder would send), or malformed encodings as they are.
 */
export function hostileSegment(random: Random): string {
  return random.oneOf([
    () => random.pick(['%E0%A4%A', '%', '%zz', '%C0%AF', '%ED%A0%80', '%FF%FE', '%00', 'a%00b', '%2F..%2F', '..', '%20']),
    () => encodeSegment(random.pick(HOSTILE_STRINGS)),
    () => 'x'.repeat(random.pick([101, 5_000])),
    () => random.pick(['0', '-1', '1e300', '18446744073709551616', '9007199254740993', '1.5', 'NaN']),
    () => encodeSegment(random.pick(['call_', 'ses_', 'org_', 'key_']) + random.pick(HOSTILE_STRINGS)),
  ]);
}

/** encodeURIComponent, except that an unpaired surrogate (which it refuses) goes out as CESU-8 bytes. */
export function encodeSegment(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out || '%20';
}
