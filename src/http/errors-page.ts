import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import escapeHtml from 'escape-html';
import { PROBLEM_TYPE_BASE } from '../errors.js';
import { ERRORS_PAGE_PATH, documentedCodes } from './error-docs.js';

/**
 * The page of error codes, served at /docs/errors by the service itself, so that every problem's
 * `documentationUrl` (`<WO_PUBLIC_URL>/docs/errors#<code>`) resolves wherever the service runs, a
 * self-hosted one without internet access included; docs/errors.md is the same text for the repository.
 */

const INTRO =
  'Every error answer is `application/problem+json` (RFC 9457): `type` (`' +
  PROBLEM_TYPE_BASE +
  '<code>`), `title`, `status`, `detail`, `code`, `instance` (the path answered), `requestId` (the answer’s `X-Request-Id`: quote it when asking for support), `documentationUrl` (the code’s section of this page, on the service’s public URL: `<WO_PUBLIC_URL>/docs/errors#<code>`), `errors[]` (field, message) where fields are at fault, and the members a code documents (`allowedActions`, `requiredScope`). Program against `code` (or `type`), never against `detail`. These are all the codes the service answers with.';

/** Inline Markdown of the error docs (`code` spans) as HTML. */
function inlineHtml(text: string): string {
  return text
    .split('`')
    .map((part, index) => (index % 2 === 1 ? `<code>${escapeHtml(part)}</code>` : escapeHtml(part)))
    .join('');
}

/** Inline Markdown of the error docs for a page of the repository's docs/: another page is a link. */
function inlineMarkdown(text: string): string {
  return text
    .split('`')
    .map((part, index) => (index % 2 === 1 ? `\`${part}\`` : part.replace(/\bdocs\/([a-z-]+\.md)\b/g, '[docs/$1]($1)')))
    .join('');
}

const STYLE = `body{font-family:system-ui,sans-serif;line-height:1.5;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
code{font-family:ui-monospace,monospace;font-size:.9em;background:#f1f3f5;padding:0 .2em;border-radius:3px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #ddd}
section{border-top:1px solid #ddd;padding:.5rem 0 1rem}section:target{background:#fff8db;outline:.5rem solid #fff8db}
h2{margin:.5rem 0 0}.status{margin:0;color:#444}h3{font-size:1rem;margin:.75rem 0 0}p{margin:.25rem 0}a{color:#1f4e79}`;

// @NOTE: the page runs no script and loads nothing: its one inline stylesheet is allowed by its hash.
const PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export function errorsPageHtml(): string {
  const codes = documentedCodes();
  const rows = codes.map(({ code, status, title }) => `<tr><td><a href="#${code}"><code>${code}</code></a></td><td>${status}</td><td>${escapeHtml(title)}</td></tr>`).join('\n');
  const sections = codes
    .map(
      ({ code, status, title, doc }) => `<section id="${code}" aria-labelledby="${code}-heading">
<h2 id="${code}-heading"><code>${code}</code></h2>
<p class="status">${status} · ${escapeHtml(title)}</p>
<h3>When</h3>
<p>${inlineHtml(doc.when)}</p>
<h3>What to do</h3>
<p>${inlineHtml(doc.action)}</p>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes · Work-order API</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Error codes</h1>
<p>${inlineHtml(INTRO)} The API reference is at <a href="/docs">/docs</a>.</p>
<table>
<thead><tr><th scope="col">Code</th><th scope="col">Status</th><th scope="col">Title</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${sections}
</main>
</body>
</html>
`;
}

/** docs/errors.md: the same page for the repository (written by scripts/write-errors-doc.ts, checked by the docs test). */
export function errorsMarkdown(): string {
  const codes = documentedCodes();
  const rows = codes.map(({ code, status, title }) => `| [\`${code}\`](#${code}) | ${status} | ${title} |`);
  const sections = codes.map(({ code, status, title, doc }) => [`## \`${code}\``, '', `${status} · ${title}`, '', `**When.** ${inlineMarkdown(doc.when)}`, '', `**What to do.** ${inlineMarkdown(doc.action)}`, ''].join('\n'));
  return [
    '<!-- Written from the service’s error catalogue by `npx tsx scripts/write-errors-doc.ts`: change the catalogue’s text, then run it; edits here are lost. -->',
    '# Error codes',
    '',
    `${inlineMarkdown(INTRO)} The service serves this page itself at \`/docs/errors\`, where each problem’s \`documentationUrl\` points.`,
    '',
    '| Code | Status | Title |',
    '|---|---|---|',
    ...rows,
    '',
    ...sections,
  ].join('\n');
}

/** Serves the page at /docs/errors. */
export function installErrorsPage(app: FastifyInstance): void {
  const page = errorsPageHtml();
  app.get(ERRORS_PAGE_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-security-policy', PAGE_CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=300').type('text/html; charset=utf-8').send(page),
  );
}
