import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { componentRef } from '../http/openapi.js';
import escapeHtml from 'escape-html';
import type { ProofService } from './service.js';
import { JwksSchema } from './schemas.js';

/**
 * Public pages at the root: the JWKS and the in-browser verifier at /verify.
 *
 * @NOTE: the verifier page runs only our own script (script-src 'self') and may not connect
 * anywhere (connect-src 'none'): checking a proof never tells the server which proof was checked,
 * and the browser itself enforces that.
 */
const VERIFY_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'none'",
  "img-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const STYLE = `body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
textarea{width:100%;min-height:10rem;font-family:ui-monospace,monospace;font-size:.8rem;border:2px dashed #999;padding:.5rem;box-sizing:border-box}
textarea.dragging{border-color:#2a6}
button{font-size:1rem;padding:.5rem 1.5rem;margin:1rem 0}
#result{padding:1rem;border-radius:.3rem;background:#eee}
#result[data-valid=true]{background:#dfd}#result[data-valid=false]{background:#fdd}
#result-headline{font-weight:bold;font-size:1.2rem}
#result-completion:empty{display:none}
#evidence-result li[data-evidence=false]{color:#a00;font-weight:bold}
small{color:#555}`;

/** Bundles verify-page-client.ts (and verify.ts with it) for the browser, once per process. */
function browserBundle(): () => Promise<string> {
  let built: Promise<string> | undefined;
  return () => {
    built ??= (async () => {
      const { build } = await import('esbuild');
      const ts = fileURLToPath(new URL('./verify-page-client.ts', import.meta.url));
      const entry = existsSync(ts) ? ts : fileURLToPath(new URL('./verify-page-client.js', import.meta.url));
      const result = await build({ entryPoints: [entry], bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2022', minify: true, legalComments: 'none', logLevel: 'silent' });
      return result.outputFiles[0]!.text;
    })();
    built.catch(() => {
      built = undefined;
    });
    return built;
  };
}

function page(jwks: string, policy: string, tsaRoots: string, docsLink: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Verify a completion proof</title>
<link rel="stylesheet" href="/verify/verifier.css">
<script src="/verify/verifier.js" defer></script>
</head>
<body>
<main>
<h1>Verify a completion proof</h1>
<p>Paste or drop a proof bundle (from <code>GET /api/v1/proofs/{id}</code>, see the <a href="/docs">API reference</a>) below. The check runs entirely in this browser,
with WebCrypto: nothing is sent to any server. The key set is the one this service publishes at
<a href="/.well-known/jwks.json"><code>/.well-known/jwks.json</code></a>, filled in when the page was served; replace it with a copy you trust if you prefer.</p>
<h2><label for="bundle">Proof bundle</label></h2>
<textarea id="bundle" spellcheck="false" placeholder="Paste the bundle JSON here, or drop the file"></textarea>
<p><label for="bundle-file">Or open a bundle file</label> <input type="file" id="bundle-file" accept="application/json,.json"></p>
<h2><label for="keys">Trusted keys (JWKS)</label></h2>
<textarea id="keys" spellcheck="false">${escapeHtml(jwks)}</textarea>
<p><label for="keys-file">Or open a key set file</label> <input type="file" id="keys-file" accept="application/json,.json"></p>
<h2><label for="policy">Witness policy (optional)</label></h2>
<p>A C2SP tlog-policy file (docs/proofs.md, “Witnesses”): the witnesses you trust and their quorum. With one, the proof is valid only if a quorum of them cosigned its checkpoint, and the result says when the log held the statement by. ${policy ? 'It is filled in with the policy this service submits its checkpoints under; replace it with your own.' : 'This service names no witnesses; paste your own policy.'}</p>
<textarea id="policy" spellcheck="false" placeholder="witness W1 &lt;vkey&gt;&#10;quorum W1">${escapeHtml(policy)}</textarea>
<p><label for="policy-file">Or open a policy file</label> <input type="file" id="policy-file" accept="text/plain,.txt"></p>
<h2><label for="tsa-roots">Trusted timestamp authority roots (optional)</label></h2>
<p>PEM certificates of the RFC 3161 time-stamping authorities you trust (docs/proofs.md, “RFC 3161 timestamps”). A bundle’s timestamp token is always checked; with roots, its signer must chain to one of them, and the result says when the TSA saw the checkpoint by. ${tsaRoots ? 'It is filled in with the roots this service checks its TSA against; replace them with your own.' : 'This service has no TSA configured; paste the roots you trust.'}</p>
<textarea id="tsa-roots" spellcheck="false" placeholder="-----BEGIN CERTIFICATE-----">${escapeHtml(tsaRoots)}</textarea>
<p><label for="tsa-roots-file">Or open a PEM file</label> <input type="file" id="tsa-roots-file" accept=".pem,.crt,text/plain"></p>
<h2><label for="evidence-files">Evidence files (optional)</label></h2>
<p>Choose photos or documents to check that the proof names them as evidence: the proof is valid with them only if each one is. They are hashed (SHA-256) in this browser; they are not sent anywhere either.</p>
<p><input type="file" id="evidence-files" multiple></p>
<button type="button" id="verify">Verify</button>
<div id="result" data-state="idle" role="status" aria-live="polite"><div id="result-headline">Not checked yet.</div><div id="result-detail"></div><p id="result-completion"></p><ul id="evidence-result"></ul></div>
<h2>What a valid proof shows</h2>
<p>That this service signed the statement, unchanged since, and recorded it in its append-only transparency log; with a witness policy, also that witnesses you trust saw that log and no other history of it, no later than the time shown. It shows who <em>reported</em> the completion
(the API key, or the service acting for a schedule or a link, named in the statement's history), not who did the work: the assignee is only whom the work order named.
Evidence files are named by their SHA-256; a proof shows that a file was named, not what it depicts.
${docsLink}</p>
<p><small>Possible failure reasons (the same in <code>wo proof verify</code> and the SDK's <code>verifyProof()</code>): <span id="reasons"></span>.</small></p>
</main>
</body>
</html>
`;
}

/** docs/proofs.md, served beside the page so that its link works on any deployment that ships the docs; undefined without them. */
function readProofsDoc(): string | undefined {
  try {
    return readFileSync(new URL('../../docs/proofs.md', import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}

export function verifyPageRoutes(proofs: ProofService, policy = '', tsaRoots = ''): FastifyPluginAsyncTypebox {
  const script = browserBundle();
  const proofsDoc = readProofsDoc();
  const docsLink = proofsDoc
    ? '<a href="/verify/proofs.md">What a proof establishes, and how to check one yourself (docs/proofs.md)</a>.'
    : 'The full explanation is docs/proofs.md in the service’s repository.';
  return async (app) => {
    app.get(
      '/.well-known/jwks.json',
      {
        schema: {
          tags: ['Proofs'],
          operationId: 'getJwks',
          summary: 'Every statement key ever used and the transparency-log key (public, no authentication)',
          description: 'The only trust input a verifier needs. The log key is marked `"x-wo-role": "transparency-log"` and carries its signed-note verifier key in `x-wo-verifier-key`.',
          response: { 200: componentRef(JwksSchema) },
        },
      },
      async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(proofs.jwks()),
    );

    app.get('/verify', { schema: { hide: true } }, async (_request, reply) =>
      reply.header('content-security-policy', VERIFY_PAGE_CSP).header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(page(JSON.stringify(proofs.jwks(), null, 2), policy, tsaRoots, docsLink)),
    );
    app.get('/verify/verifier.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.header('x-content-type-options', 'nosniff').type('text/javascript; charset=utf-8').send(await script()),
    );
    if (proofsDoc) {
      app.get('/verify/proofs.md', { schema: { hide: true } }, async (_request, reply) =>
        reply.header('content-security-policy', "default-src 'none'").header('x-content-type-options', 'nosniff').type('text/plain; charset=utf-8').send(proofsDoc),
      );
    }
    app.get('/verify/verifier.css', { schema: { hide: true } }, async (_request, reply) =>
      reply.header('x-content-type-options', 'nosniff').type('text/css; charset=utf-8').send(STYLE),
    );
  };
}
