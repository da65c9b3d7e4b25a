import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../errors.js';
import { CURRENCY_EXPONENTS, currencyExponent } from './currencies.js';
import { formatMoney, MAX_MINOR_UNITS, minorUnitsOf, parseMoney } from './money.js';

const eur = { field: 'body.rate', currency: 'EUR' };
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
  return 'no error';
};

describe('Money', () => {
  it('reads a decimal string into whole minor units, exactly, and writes it back with the currency’s digits', () => {
    assert.equal(parseMoney({ amount: '12.5', currency: 'EUR' }, eur).minor, 1250n);
    assert.equal(parseMoney({ amount: '0.1', currency: 'EUR' }, eur).minor + parseMoney({ amount: '0.2', currency: 'EUR' }, eur).minor, 30n);
    assert.deepEqual(formatMoney({ minor: 30n, currency: 'EUR' }), { amount: '0.30', currency: 'EUR' });
    assert.deepEqual(formatMoney({ minor: 5n, currency: 'EUR' }), { amount: '0.05', currency: 'EUR' });
    assert.deepEqual(formatMoney({ minor: -1250n, currency: 'EUR' }), { amount: '-12.50', currency: 'EUR' });
    assert.deepEqual(formatMoney(parseMoney({ amount: '3200', currency: 'JPY' }, { field: 'f', currency: 'JPY' })), { amount: '3200', currency: 'JPY' });
    assert.deepEqual(formatMoney(parseMoney({ amount: '1.5', currency: 'KWD' }, { field: 'f', currency: 'KWD' })), { amount: '1.500', currency: 'KWD' });
    assert.equal(minorUnitsOf('9007199254740991'), MAX_MINOR_UNITS);
  });

  it('refuses more digits than the minor unit has, negatives unless allowed, other currencies and non-decimals', () => {
    assert.equal(codeOf(() => parseMoney({ amount: '12.505', currency: 'EUR' }, eur)), 'unprocessable_entity');
    assert.equal(codeOf(() => parseMoney({ amount: '3200.5', currency: 'JPY' }, { field: 'f', currency: 'JPY' })), 'unprocessable_entity');
    assert.equal(codeOf(() => parseMoney({ amount: '-1', currency: 'EUR' }, eur)), 'unprocessable_entity');
    assert.equal(parseMoney({ amount: '-1', currency: 'EUR' }, { ...eur, allowNegative: true }).minor, -100n);
    assert.equal(codeOf(() => parseMoney({ amount: '12.50', currency: 'USD' }, eur)), 'currency_mismatch');
    assert.equal(codeOf(() => parseMoney({ amount: '12.50', currency: 'XYZ' }, eur)), 'validation_failed');
    for (const amount of ['1e3', '01.5', '.5', '5.', '1,5', ' 5', '']) assert.equal(codeOf(() => parseMoney({ amount, currency: 'EUR' }, eur)), 'unprocessable_entity', amount);
    assert.equal(codeOf(() => parseMoney({ amount: '90071992547409.92', currency: 'EUR' }, eur)), 'unprocessable_entity', 'past 2^53 − 1 minor units');
  });

  it('knows ISO 4217’s minor units, not CLDR’s display digits', () => {
    assert.deepEqual(['EUR', 'USD', 'JPY', 'KWD', 'IQD', 'CLF', 'ISK'].map(currencyExponent), [2, 2, 0, 3, 3, 4, 0]);
    assert.ok(CURRENCY_EXPONENTS.size > 150);
    assert.throws(() => currencyExponent('XAU'));
  });
});
