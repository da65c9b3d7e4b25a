import { AppError, errors, type FieldError } from '../errors.js';
import { currencyExponent, isCurrencyCode } from './currencies.js';

/**
 * Money as the API writes it: `{"amount": "12.50", "currency": "EUR"}`, the amount a decimal string
 * in the currency's minor units. Kept and computed as a whole number of minor units (a bigint),
 * never as a float: 0.1 + 0.2 is exactly 0.30.
 */
export interface Money {
  amount: string;
  currency: string;
}

/** An amount as stored: a whole number of the currency's minor units (cents for EUR, yen for JPY). */
export interface MinorUnits {
  minor: bigint;
  currency: string;
}

/**
 * The largest number of minor units kept: what both databases' 64-bit integers and better-sqlite3's
 * numbers hold exactly (2^53 − 1), some 90 trillion euros.
 */
export const MAX_MINOR_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

const DECIMAL = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

export interface ParseOptions {
  /** Where the amount sits in the request, for the error (`body.hourlyRate`). */
  field: string;
  /** The organization's currency: another one is 422 currency_mismatch. */
  currency: string;
  /** Whether a negative amount is allowed (a correction); rates and prices are not negative. */
  allowNegative?: boolean;
}

/**
 * Reads a Money of a request into minor units: the currency must be the organization's (422
 * currency_mismatch), the amount a plain decimal with at most the currency's minor digits ("12.5" and
 * "12.50" are both 1250 cents; "12.505" is refused, never rounded).
 */
export function parseMoney(money: Money, options: ParseOptions): MinorUnits {
  const { field } = options;
  if (!isCurrencyCode(money.currency)) {
    throw errors.validation([{ field: `${field}.currency`, message: `must be an ISO 4217 currency code such as EUR or USD, got "${money.currency.slice(0, 10)}"` }]);
  }
  if (money.currency !== options.currency) {
    throw new AppError('currency_mismatch', `Amounts of this organization are in ${options.currency}; ${field} is in ${money.currency}.`, {
      errors: [{ field: `${field}.currency`, message: `must be ${options.currency}, the organization’s currency` }],
    });
  }
  const exponent = currencyExponent(money.currency);
  const problem = (message: string): never => {
    throw errors.unprocessable(`${field} is not an amount of ${money.currency}.`, [{ field: `${field}.amount`, message } satisfies FieldError]);
  };
  const match = DECIMAL.exec(money.amount);
  if (!match) return problem('must be a decimal number written with digits and at most one point, such as "12.50"');
  const [, sign, whole, fraction = ''] = match;
  if (fraction.length > exponent) {
    return problem(exponent === 0 ? `${money.currency} has no minor unit: write a whole number` : `${money.currency} has ${exponent} decimal${exponent === 1 ? '' : 's'}: at most ${exponent} digits after the point`);
  }
  let minor = BigInt(whole! + fraction.padEnd(exponent, '0'));
  if (sign === '-') minor = -minor;
  if (minor < 0n && !options.allowNegative) return problem('must not be negative');
  if (minor > MAX_MINOR_UNITS || minor < -MAX_MINOR_UNITS) return problem('is too large');
  return { minor, currency: money.currency };
}

/** Writes minor units as the API's Money: exactly the currency's minor digits ("12.50", "1200" for JPY). */
export function formatMoney({ minor, currency }: MinorUnits): Money {
  const exponent = currencyExponent(currency);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const amount = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return { amount: negative ? `-${amount}` : amount, currency };
}

/** Minor units as a database answers them: a number (SQLite), a string (PostgreSQL's bigint) or a bigint. */
export function minorUnitsOf(stored: number | string | bigint): bigint {
  return typeof stored === 'bigint' ? stored : BigInt(stored);
}
