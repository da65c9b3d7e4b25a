import type { FastifyReply } from 'fastify';

/** One link-value of an RFC 8288 `Link` field: `<target>; rel="…"` and any further parameters. */
export function linkValue(target: string, rel: string, parameters: Record<string, string> = {}): string {
  const extra = Object.entries(parameters).map(([name, value]) => `; ${name}="${value}"`).join('');
  return `<${target}>; rel="${rel}"${extra}`;
}

/** Adds link-values to the answer's `Link` field, after those already set (pages, then a deprecation). */
export function addLinks(reply: FastifyReply, links: readonly string[]): void {
  if (links.length === 0) return;
  const existing = reply.getHeader('link');
  reply.header('link', [...(existing === undefined ? [] : [String(existing)]), ...links].join(', '));
}

/**
 * A request target as a URI reference for a Link target: what the client sent, with the characters
 * that cannot stand inside `<…>` (controls, space, `<`, `>`, `"`, anything past ASCII) percent-encoded.
 */
export function linkTarget(target: string): string {
  return target.replace(/[^\x21-\x7e]|[<>"]/g, (character) => {
    const code = character.charCodeAt(0);
    return code < 0x100 ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(character);
  });
}
