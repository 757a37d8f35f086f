// Counting before parsing. A JSON body built to be big (a `metadata` of 60,000 keys, a list of 200,000
// items, 60,000 fields nobody takes) costs most of a second of the event loop to parse into objects and
// to check value by value. So the bounds the contract sets on containers are counted first, on the
// body's bytes, from the contract itself: an object with more keys than its `maxProperties`, a list with
// more items than its `maxItems`, or an object with more fields it does not take than anyone mistypes is
// refused at once, before a value is parsed or looked at. What gets past is small enough to parse and
// for the validator to check whole.
//
// Once parsed, a walk over the same shapes names each field a strict object
// (`additionalProperties: false`) does not take, with the field probably meant, and each free-form key
// longer than the contract's `x-max-key-length` (OpenAPI 3.0 cannot bound a key).
import type { ValidationIssue } from '../errors.js';
import { contract } from './contract.js';
import { resolved } from './refs.js';

/** More unknown fields than this in one object is not a typo: it is refused without looking further. */
export const MAX_UNKNOWN_FIELDS = 20;

interface ObjectShape {
  kind: 'object';
  maxProperties?: number;
  /** The fields a strict object takes (with the shape of each that holds containers); null when free-form. */
  fields: Map<string, Shape | null> | null;
  /** The lengths of the fields' names in UTF-8 bytes. */
  fieldByteLengths: Set<number> | null;
  /** The shape of a free-form object's values. */
  values: Shape | null;
  maxKeyLength?: number;
}

interface ArrayShape {
  kind: 'array';
  maxItems?: number;
  items: Shape | null;
}

/** A value that may be one of several containers (`oneOf`/`anyOf`): the one of the value's kind applies. */
interface EitherShape {
  kind: 'either';
  options: Array<ObjectShape | ArrayShape>;
}

type Shape = ObjectShape | ArrayShape | EitherShape;

type SchemaNode = Record<string, any>;
type Location = ValidationIssue['loc'];

/** The containers of a schema, or null when it describes a scalar (nothing to count). */
function shapeOf(schemaNode: SchemaNode | undefined): Shape | null {
  if (!schemaNode) return null;
  const schema: SchemaNode = resolved(contract, schemaNode);
  const alternatives = [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]
    .map(shapeOf)
    .filter((shape): shape is ObjectShape | ArrayShape => shape !== null && shape.kind !== 'either');
  if (alternatives.length) return alternatives.length === 1 ? alternatives[0] : { kind: 'either', options: alternatives };
  if (schema.type === 'array') return { kind: 'array', maxItems: schema.maxItems, items: shapeOf(schema.items) };
  if (schema.type !== 'object') return null;
  const strict = schema.additionalProperties === false;
  const shape: ObjectShape = {
    kind: 'object',
    maxProperties: schema.maxProperties,
    fields: strict ? new Map(Object.entries<SchemaNode>(schema.properties ?? {}).map(([name, property]) => [name, shapeOf(property)])) : null,
    fieldByteLengths: strict ? new Set(Object.keys(schema.properties ?? {}).map((name) => Buffer.byteLength(name))) : null,
    values: typeof schema.additionalProperties === 'object' ? shapeOf(schema.additionalProperties) : null,
    maxKeyLength: schema['x-max-key-length'],
  };
  // An object that takes any keys without bound (OAuth's forms) has nothing to count.
  const boundless = !shape.fields && !shape.values && shape.maxProperties === undefined && shape.maxKeyLength === undefined;
  return boundless ? null : shape;
}

const count = (n: number) => n.toLocaleString('en-US');

/** An open container of the body being scanned; `shape` null when the contract does not describe it. */
interface Frame {
  shape: ObjectShape | ArrayShape | null;
  loc: Location | null;
  isObject: boolean;
  /** Keys, or items, seen so far. */
  members: number;
  /** The key whose value comes next (objects). */
  key: string;
  unknownCount: number;
  unknownNamed: string[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const endsScalar = (byte: number) => byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_ARRAY || isSpace(byte);

/** The text of a JSON string's bytes (between its quotes), escapes decoded. */
function stringAt(bytes: Buffer, start: number, end: number): string {
  if (!hasByte(bytes, start, end, BACKSLASH)) return bytes.toString('utf8', start, end);
  try {
    return JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string;
  } catch {
    return bytes.toString('utf8', start, end);
  }
}

function hasByte(bytes: Buffer, start: number, end: number, byte: number): boolean {
  for (let at = start; at < end; at++) if (bytes[at] === byte) return true;
  return false;
}

/** Where the string opened at `open` closes: the next quote not escaped by an odd run of backslashes; -1 if none. */
function closingQuote(bytes: Buffer, open: number): number {
  let end = bytes.indexOf(QUOTE, open + 1);
  while (end !== -1) {
    let slashes = 0;
    while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end = bytes.indexOf(QUOTE, end + 1);
  }
  return -1;
}

/** The shape a value has in its container (the container's items, the field's, a free-form value's). */
function memberShape(frame: Frame | undefined, root: Shape): Shape | null {
  if (!frame) return root;
  const { shape } = frame;
  if (!shape) return null;
  if (shape.kind === 'array') return shape.items;
  return shape.fields ? (shape.fields.get(frame.key) ?? null) : shape.values;
}

/** What a closed container broke of its bounds, if anything. */
function exceededBy(frame: Frame): ValidationIssue | null {
  const { shape, loc } = frame;
  if (!shape || !loc) return null;
  if (shape.kind === 'array') {
    if (shape.maxItems === undefined || frame.members <= shape.maxItems) return null;
    return { loc, msg: `must have at most ${count(shape.maxItems)} items; it has ${count(frame.members)}`, type: 'too_many_items' };
  }
  if (shape.maxProperties !== undefined && frame.members > shape.maxProperties) {
    return { loc, msg: `must have at most ${count(shape.maxProperties)} keys; it has ${count(frame.members)}`, type: 'too_many_properties' };
  }
  if (shape.fields && frame.unknownCount > MAX_UNKNOWN_FIELDS) {
    return {
      loc,
      msg: `has ${count(frame.unknownCount)} fields it does not take (${frame.unknownNamed.join(', ')}, ...); it takes ${[...shape.fields.keys()].join(', ')}`,
      type: 'too_many_unknown_fields',
    };
  }
  return null;
}

/**
 * The bounds a JSON body breaks, counted on its bytes in one pass without parsing it: containers the
 * contract describes are counted, the rest only followed. Not a JSON parser: it reads well-formed JSON
 * right and stops at anything else (the parser that runs next says what is wrong with it). A tight loop:
 * it runs on every JSON body, and on a hostile one over a megabyte of bytes.
 */
export function exceededInJson(root: Shape, bytes: Buffer): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Frame[] = [];
  let top: Frame | undefined;
  let expectingKey = false;
  const length = bytes.length;
  for (let at = 0; at < length; at++) {
    const byte = bytes[at];
    if (isSpace(byte) || byte === COLON) continue;
    if (byte === QUOTE) {
      const end = closingQuote(bytes, at);
      if (end === -1) break;
      if (top?.isObject && expectingKey) {
        top.members++;
        expectingKey = false;
        const shape = top.shape as ObjectShape | null;
        if (shape?.fields) countField(top, shape, bytes, at + 1, end);
        else if (shape?.values) top.key = stringAt(bytes, at + 1, end);
      } else if (top && !top.isObject) {
        top.members++;
      }
      at = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      const isObject = byte === OPEN_OBJECT;
      if (top && !top.isObject) top.members++;
      let shape = memberShape(top, root);
      if (shape?.kind === 'either') shape = shape.options.find((option) => (option.kind === 'object') === isObject) ?? null;
      if (shape && (shape.kind === 'object') !== isObject) shape = null;
      const loc = shape ? (top ? (top.loc ? [...top.loc, top.isObject ? top.key : top.members - 1] : null) : ['body']) : null;
      if (!loc) {
        // Nothing the contract bounds is inside: only its end is needed.
        const end = containerEnd(bytes, at);
        if (end === -1) break;
        at = end;
        continue;
      }
      top = { shape, loc, isObject, members: 0, key: '', unknownCount: 0, unknownNamed: [] } as Frame;
      stack.push(top);
      expectingKey = isObject;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      const closed = stack.pop();
      if (!closed) break;
      const issue = exceededBy(closed);
      if (issue) issues.push(issue);
      top = stack[stack.length - 1];
      expectingKey = false;
    } else if (byte === COMMA) {
      expectingKey = top?.isObject ?? false;
    } else {
      if (top && !top.isObject) top.members++;
      while (at + 1 < length && !endsScalar(bytes[at + 1])) at++;
    }
  }
  return issues;
}

/** Where the container opened at `open` closes (strings skipped whole); -1 if it does not. */
function containerEnd(bytes: Buffer, open: number): number {
  let depth = 0;
  for (let at = open; at < bytes.length; at++) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      at = closingQuote(bytes, at);
      if (at === -1) return -1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth++;
    } else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && --depth === 0) {
      return at;
    }
  }
  return -1;
}

/**
 * A key of a strict object: a field it takes, or one more it does not. Most keys of a body built to be
 * big have a length no field has: those are told apart without being read.
 */
function countField(frame: Frame, shape: ObjectShape, bytes: Buffer, start: number, end: number): void {
  const mayBeField = shape.fieldByteLengths!.has(end - start) || hasByte(bytes, start, end, BACKSLASH);
  const key = mayBeField || frame.unknownNamed.length < 3 ? stringAt(bytes, start, end) : '';
  frame.key = key;
  if (mayBeField && shape.fields!.has(key)) return;
  frame.unknownCount++;
  if (frame.unknownNamed.length < 3) frame.unknownNamed.push(key);
}

/** The fields a parsed body names that its strict objects do not take, and free-form keys too long. */
function fieldIssues(shape: Shape, value: unknown, loc: Location, issues: ValidationIssue[]): void {
  if (shape.kind === 'either') {
    const option = shape.options.find((candidate) => (candidate.kind === 'array') === Array.isArray(value));
    if (option) fieldIssues(option, value, loc, issues);
    return;
  }
  if (shape.kind === 'array') {
    if (Array.isArray(value) && shape.items) value.forEach((item, index) => fieldIssues(shape.items!, item, [...loc, index], issues));
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return;
  const entries = value as Record<string, unknown>;
  if (shape.fields) {
    const { fields } = shape;
    for (const key of Object.keys(entries)) {
      const field = fields.get(key);
      if (field === undefined) issues.push({ loc: [...loc, key], msg: unknownFieldMessage(key, [...fields.keys()]), type: 'unknown_field' });
      else if (field) fieldIssues(field, entries[key], [...loc, key], issues);
    }
    return;
  }
  for (const key of Object.keys(entries)) {
    if (shape.maxKeyLength !== undefined && key.length > shape.maxKeyLength) {
      issues.push({ loc: [...loc, key], msg: `its name must be at most ${shape.maxKeyLength} characters long`, type: 'key_too_long' });
    }
    if (shape.values) fieldIssues(shape.values, entries[key], [...loc, key], issues);
  }
}

/** What a strict object says of a field it does not take: the field probably meant, else the ones it takes. */
function unknownFieldMessage(field: string, known: string[]): string {
  const meant = closestName(field, known);
  return meant ? `unknown field; did you mean ${meant}?` : `unknown field; this object takes ${known.join(', ')}`;
}

/** The known name within a couple of typing mistakes of `name` (the closest), or undefined. */
export function closestName(name: string, known: string[]): string | undefined {
  const lowered = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lowered, candidate.toLowerCase());
    const allowed = Math.max(1, Math.min(3, Math.floor(candidate.length / 4)));
    if (distance <= allowed && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (as people mistype). */
function editDistance(a: string, b: string): number {
  // Three rows of the usual table: the one before the previous is needed for swaps.
  let older: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j], older[j - 2] + 1);
    }
    older = previous;
    previous = current;
  }
  return previous[b.length];
}

export interface BodyBounds {
  /** The bounds a JSON body's bytes break (counted before it is parsed); none for an operation without JSON. */
  exceededInJson(bytes: Buffer): ValidationIssue[];
  /** Unknown fields and too long keys of a parsed body (a JSON document, or an upload's fields). */
  fieldIssues(mediaType: string, body: unknown): ValidationIssue[];
}

const compiled = new Map<string, BodyBounds | null>();

/**
 * An operation's body bounds, by media type, or null when its bodies hold nothing to count (or it takes
 * none). Compiled once per operation: the body reader and the validator both use them.
 */
export function bodyBounds(op: { method: string; path: string }): BodyBounds | null {
  const id = `${op.method} ${op.path}`;
  if (!compiled.has(id)) compiled.set(id, compile(op));
  return compiled.get(id)!;
}

function compile(op: { method: string; path: string }): BodyBounds | null {
  const content: Record<string, SchemaNode> = resolved(contract, contract.paths[op.path]?.[op.method]?.requestBody ?? {})?.content ?? {};
  const shapes = new Map(
    Object.entries(content)
      .map(([mediaType, media]) => [mediaType, shapeOf(media.schema)] as const)
      .filter((entry): entry is readonly [string, Shape] => entry[1] !== null),
  );
  if (!shapes.size) return null;
  const json = shapes.get('application/json');
  return {
    exceededInJson: (bytes) => (json ? exceededInJson(json, bytes) : []),
    fieldIssues: (mediaType, body) => {
      const shape = shapes.get(mediaType);
      const issues: ValidationIssue[] = [];
      if (shape) fieldIssues(shape, body, ['body'], issues);
      return issues;
    },
  };
}
