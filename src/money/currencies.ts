/**
 * ISO 4217's active currency codes and the digits of their minor unit (the "exponent": EUR has 2,
 * JPY 0, KWD 3, CLF 4), as the ISO 4217 maintenance agency publishes them (list one, 2025). Codes
 * whose minor unit is "N.A." (gold, special drawing rights, the test code) are left out: no
 * organization keeps its books in them. No npm package installed here carries this list, and
 * `Intl` answers CLDR's display digits instead (IQD 0 where ISO says 3).
 */
const EXPONENT_0 = ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const EXPONENT_3 = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
const EXPONENT_4 = ['CLF', 'UYW'];
const EXPONENT_2 = [
  'AED', 'AFN', 'ALL', 'AMD', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN',
  'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CNY', 'COP', 'COU', 'CRC', 'CUP', 'CVE', 'CZK', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN',
  'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IRR', 'JMD',
  'KES', 'KGS', 'KHR', 'KPW', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU', 'MUR',
  'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'QAR', 'RON',
  'RSD', 'RUB', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT',
  'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'USD', 'USN', 'UYU', 'UZS', 'VED', 'VES', 'WST', 'XCD', 'XCG', 'YER', 'ZAR', 'ZMW', 'ZWG',
];

/** Digits after the decimal point of each currency's minor unit, by its ISO 4217 code. */
export const CURRENCY_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...EXPONENT_0.map((code) => [code, 0] as const),
  ...EXPONENT_2.map((code) => [code, 2] as const),
  ...EXPONENT_3.map((code) => [code, 3] as const),
  ...EXPONENT_4.map((code) => [code, 4] as const),
]);

/** An organization's currency when none is given (`wo orgs create NAME --currency …`). */
export const DEFAULT_CURRENCY = 'USD';

export function isCurrencyCode(code: string): boolean {
  return CURRENCY_EXPONENTS.has(code);
}

/** The digits of `code`'s minor unit; throws for a code that is not an active ISO 4217 currency. */
export function currencyExponent(code: string): number {
  const exponent = CURRENCY_EXPONENTS.get(code);
  if (exponent === undefined) throw new Error(`"${code}" is not an ISO 4217 currency code`);
  return exponent;
}
