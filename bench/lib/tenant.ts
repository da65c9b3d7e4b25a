import { randomUUID } from 'node:crypto';
import { runCli } from './processes.js';

export const BENCH_SCOPES = ['records:read', 'records:write', 'categories:read', 'categories:write', 'webhooks:manage', 'proofs:read'];

export interface Tenant {
  orgId: string;
  key: string;
  /** For requests with a JSON body. */
  headers: Record<string, string>;
  /** For GETs: a content-type without a body is a 400 (empty JSON body). */
  readHeaders: Record<string, string>;
}

/**
 * An organization and an API key, made the way an operator makes them: through the `wo` CLI
 * (`env` names the database when it is not the SQLite file in `dataDir`; `scopes`, the key's).
 */
export async function createTenant(
  dataDir: string,
  name = `bench-${randomUUID().slice(0, 8)}`,
  env: Record<string, string> = {},
  scopes: readonly string[] = BENCH_SCOPES,
): Promise<Tenant> {
  const org = JSON.parse(await runCli(dataDir, ['orgs', 'create', name, '--json'], env)) as { id: string };
  const key = JSON.parse(await runCli(dataDir, ['keys', 'create', '--org', org.id, '--scopes', scopes.join(','), '--name', 'bench', '--json'], env)) as { key: string };
  const authorization = `Bearer ${key.key}`;
  return { orgId: org.id, key: key.key, headers: { authorization, 'content-type': 'application/json' }, readHeaders: { authorization } };
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
}

export async function callApi<T = Record<string, unknown>>(baseUrl: string, tenant: Tenant, method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? tenant.readHeaders : tenant.headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
}

export async function createCategory(baseUrl: string, tenant: Tenant): Promise<string> {
  const answer = await callApi<{ id: string }>(baseUrl, tenant, 'POST', '/api/v1/categories', { name: `Plumbing ${randomUUID().slice(0, 8)}` });
  if (answer.status !== 201) throw new Error(`creating a category answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.id;
}

export function recordBody(categoryId: string, n: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    categoryId,
    address: `${n % 400} Load Street`,
    requesterName: 'Bench Requester',
    description: 'The radiator in room 4 is cold; please send someone this week.',
    ...extra,
  });
}

/**
 * Whether an API route exists in this build, read from the service's own OpenAPI document:
 * the webhooks and proofs parts skip themselves on a build without the feature.
 */
export async function routeExists(baseUrl: string, method: string, pathPrefix: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (!response.ok) return false;
  const doc = (await response.json()) as { paths?: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths ?? {}).some(([p, ops]) => p.startsWith(pathPrefix) && method.toLowerCase() in ops);
}
