import { Type } from '@sinclair/typebox';
import type { Money } from './money.js';

/**
 * The one schema of Money in the API (the `Money` component). The amount's digits are checked
 * against the currency's minor unit by parseMoney (src/money/money.ts), which the schema cannot say.
 */
export const MoneySchema = Type.Object(
  {
    amount: Type.String({
      minLength: 1,
      maxLength: 40,
      pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$',
      description: 'A decimal string with at most the currency’s minor digits (`12.50` EUR, `1200` JPY, `1.250` KWD); answered with exactly that many.',
      examples: ['12.50'],
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code: the organization’s currency (422 `currency_mismatch` otherwise).', examples: ['EUR'] }),
  },
  { $id: 'Money', additionalProperties: false, description: 'An amount of money, exact: never a float.' },
);

/** A reference to the Money component, typed as what it holds. */
export const MoneyRef = (description?: string) => Type.Unsafe<Money>(Type.Ref('Money', description ? { description } : {}));
