/**
 * The one rounding rule of the service: `numerator ÷ denominator` to a whole number, half to even
 * (banker's rounding, IEEE 754's default and what accounting systems use for a line), on bigints so
 * that nothing passes through a float. Labor is minutes × rate ÷ 60 rounded this way per line; a
 * part line is quantity × unit cost; totals are sums of lines and never rounded again.
 */
export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  if (denominator < 0n) return divideHalfEven(-numerator, -denominator);
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  let quotient = magnitude / denominator;
  const twiceRemainder = (magnitude % denominator) * 2n;
  if (twiceRemainder > denominator || (twiceRemainder === denominator && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}
