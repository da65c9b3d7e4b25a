import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The copy of the served OpenAPI document that the SDK (`sdk/`) is generated from. */
export const SDK_SNAPSHOT_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../sdk/openapi.json');

export function serializeSnapshot(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** Why the snapshot differs from the served document, or undefined when it is current. */
export function sdkSnapshotStaleness(document: unknown): string | undefined {
  if (!existsSync(SDK_SNAPSHOT_PATH)) return 'sdk/openapi.json is missing';
  if (readFileSync(SDK_SNAPSHOT_PATH, 'utf8') !== serializeSnapshot(document)) return 'sdk/openapi.json differs from the served document';
  return undefined;
}
