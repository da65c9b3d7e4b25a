// Writes sdk/src/proof-types.ts, the SDK's types of a completion statement, from the statement schema
// (src/proofs/statement-schema.ts). `npm run openapi:check` fails while the file differs from it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderSdkProofTypes, SDK_PROOF_TYPES_PATH } from './sdk-proof-types.js';

writeFileSync(SDK_PROOF_TYPES_PATH, await renderSdkProofTypes());
console.log(`wrote ${path.relative(process.cwd(), SDK_PROOF_TYPES_PATH)}`);
