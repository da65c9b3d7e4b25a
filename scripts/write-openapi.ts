// Writes the OpenAPI document the app serves to sdk/openapi.json, the snapshot the SDK is generated
// from. `npm run openapi:check` fails while the snapshot differs from what the app serves.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SDK_SNAPSHOT_PATH, serializeSnapshot } from './sdk-snapshot.js';
import { servedOpenApiDocument } from './served-openapi.js';

writeFileSync(SDK_SNAPSHOT_PATH, serializeSnapshot(await servedOpenApiDocument()));
console.log(`wrote ${path.relative(process.cwd(), SDK_SNAPSHOT_PATH)}`);
