/**
 * What to send for a `Range` header (RFC 9110, section 14) on a representation of `size` bytes:
 * the whole of it, one range (both ends included), or nothing satisfiable (416).
 *
 * One range only: a header asking for several, or one this cannot read, is ignored and the whole
 * representation sent, as RFC 9110 allows a server to. So is a `Range` whose `If-Range` names another
 * version (`currentEtag` differs), since the client would splice bytes of two versions together.
 */
export type ByteRange = { kind: 'whole' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/i;

export function byteRangeOf(range: string | undefined, ifRange: string | undefined, size: number, currentEtag: string): ByteRange {
  if (range === undefined) return { kind: 'whole' };
  if (ifRange !== undefined && ifRange.trim() !== currentEtag) return { kind: 'whole' };
  const match = SINGLE_RANGE.exec(range.trim());
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  // `5-3` is not a range at all (ignored); `500-` or `500-600` of a 100-byte file asks for nothing there is.
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
