/**
 * `Content-Disposition: attachment` for a download named `filename` (RFC 6266): a quoted ASCII
 * fallback, and the exact name in `filename*` (RFC 8187, UTF-8, percent-encoded).
 * @NOTE: the name comes from a client. The fallback keeps only printable ASCII and replaces quotes,
 * backslashes and `%` (which some browsers decode), so nothing breaks out of the quoted string;
 * `filename*` is percent-encoded throughout. Browsers strip path separators themselves.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves ' ( ) * unencoded, which RFC 8187's attr-char does not allow.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
