import { errors } from '../errors.js';

/**
 * Quantities of stock as the API writes them: a decimal string with at most 3 decimals ("2", "0.25",
 * "1.125"), kept as a whole number of thousandths (a bigint), so 0.1 + 0.2 of a litre is exactly 0.3.
 */
export const QUANTITY_SCALE = 1000n;
export const QUANTITY_PATTERN = '^-?(0|[1-9][0-9]{0,11})(\\.[0-9]{1,3})?$';
const QUANTITY = /^(-?)(0|[1-9][0-9]{0,11})(?:\.([0-9]+))?$/;

export interface QuantityOptions {
  /** Where it sits in the request, for the error (`body.quantity`). */
  field: string;
  /** adjust takes a signed quantity; every other movement a positive one. */
  allowNegative?: boolean;
  /** A reorder point may be 0; a movement never moves nothing. */
  allowZero?: boolean;
}

/** Reads a quantity of a request into thousandths; more than 3 decimals is refused, never rounded. */
export function parseQuantity(value: string, options: QuantityOptions): bigint {
  const match = QUANTITY.exec(value);
  const refuse = (message: string): never => {
    throw errors.unprocessable(`${options.field} is not a quantity.`, [{ field: options.field, message }]);
  };
  if (!match) return refuse('must be a decimal number written with digits and at most one point, such as "2.5"');
  const [, sign, whole, fraction = ''] = match;
  if (fraction.length > 3) return refuse('has at most 3 decimals');
  let thousandths = BigInt(whole!) * QUANTITY_SCALE + BigInt(fraction.padEnd(3, '0'));
  if (sign === '-') thousandths = -thousandths;
  if (thousandths === 0n && !options.allowZero) return refuse('must not be zero');
  if (thousandths < 0n && !options.allowNegative) return refuse('must be positive');
  return thousandths;
}

/** Writes thousandths as the API's quantity: no trailing zeros ("2", "2.5", "0.125", "-1"). */
export function formatQuantity(thousandths: bigint | number | string): string {
  const value = BigInt(thousandths);
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const whole = magnitude / QUANTITY_SCALE;
  const fraction = (magnitude % QUANTITY_SCALE).toString().padStart(3, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
