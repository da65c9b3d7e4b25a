import canonicalizeModule from 'canonicalize';

type Serialize = (input: unknown) => string | undefined;
// The package is CommonJS with an ESM-style typing: depending on the loader (Node, tsx, esbuild)
// the default import is the function itself or an object holding it as `default`.
const canonicalize: Serialize =
  typeof canonicalizeModule === 'function' ? (canonicalizeModule as Serialize) : (canonicalizeModule as unknown as { default: Serialize }).default;

/**
 * RFC 8785 JSON Canonicalization Scheme, restricted to I-JSON (RFC 7493) input.
 *
 * The `canonicalize` package does the serialization; this module refuses what RFC 8785 cannot
 * represent faithfully across implementations:
 * - numbers that are not finite (NaN, ±Infinity),
 * - integers beyond ±(2^53 − 1), which other parsers may round differently,
 * - strings (values or keys) holding lone UTF-16 surrogates, which have no UTF-8 form,
 * - anything that is not plain JSON data (undefined, functions, symbols, bigint, Dates, class instances).
 * Duplicate object keys cannot occur in a JavaScript object, so they need no check on this side;
 * a verifier that parses a statement with duplicate keys gets different bytes on re-serialization
 * and reports it as not canonical.
 *
 * Browser-safe: the verifier bundles it.
 */

export class NotIJsonError extends Error {
  override name = 'NotIJsonError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws NotIJsonError where `value` is not I-JSON (see above). */
export function assertIJson(value: unknown): void {
  checkValue(value, ROOT);
}

// Where a value sits, built into a path string only when there is an error to report: a statement
// has hundreds of values, and the check runs in every completing transaction.
interface Location {
  parent: Location | undefined;
  key: string | number;
}
const ROOT: Location = { parent: undefined, key: '$' };

function pathOf(location: Location): string {
  const parts: string[] = [];
  for (let at: Location | undefined = location; at; at = at.parent) parts.push(typeof at.key === 'number' ? `[${at.key}]` : at.parent ? `.${at.key}` : at.key);
  return parts.reverse().join('');
}

function checkValue(value: unknown, location: Location): void {
  switch (typeof value) {
    case 'string':
      if (LONE_SURROGATE.test(value)) throw new NotIJsonError(pathOf(location), 'string holds a lone surrogate');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new NotIJsonError(pathOf(location), 'number is not finite');
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new NotIJsonError(pathOf(location), 'integer is beyond ±(2^53 − 1)');
      return;
    case 'boolean':
      return;
    case 'object': {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) checkValue(value[i], { parent: location, key: i });
        return;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new NotIJsonError(pathOf(location), 'is not a plain JSON object');
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (LONE_SURROGATE.test(key)) throw new NotIJsonError(pathOf(location), `key ${JSON.stringify(key)} holds a lone surrogate`);
        checkValue((value as Record<string, unknown>)[key], { parent: location, key });
      }
      return;
    }
    default:
      throw new NotIJsonError(pathOf(location), `${typeof value} is not JSON`);
  }
}

/** The RFC 8785 text of `value`; throws NotIJsonError for input outside I-JSON. */
export function canonicalJson(value: unknown): string {
  assertIJson(value);
  const text = canonicalize(value);
  if (text === undefined) throw new NotIJsonError('$', 'has no JSON form');
  return text;
}

/** The RFC 8785 bytes (UTF-8) of `value`. */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}
