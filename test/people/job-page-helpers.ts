import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, Tenant } from '../helpers/test-app.js';

/** POST through the API, expecting 201. */
export async function create(tenant: Tenant, url: string, payload: unknown): Promise<{ id: string } & Record<string, any>> {
  const response = await tenant.request({ method: 'POST', url, payload: payload as never });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

/** Requests to one job page (`path`): a GET or a raw body, and a form post as the browser sends it. */
export function jobPageClient(t: TestApp, path: string) {
  const page = (suffix = '', options: { method?: 'GET' | 'POST'; payload?: string | Buffer; headers?: Record<string, string> } = {}) =>
    t.app.inject({ method: options.method ?? 'GET', url: `${path}${suffix}`, ...(options.payload !== undefined ? { payload: options.payload } : {}), headers: options.headers ?? {} });
  const form = (suffix: string, fields: Record<string, string | string[]>) => {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
    return page(suffix, { method: 'POST', payload: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  };
  return { page, form };
}

/** A form's answer: back to the page, so that reloading it sends nothing again. */
export function seeOther(response: LightMyRequestResponse, path: string): void {
  assert.equal(response.statusCode, 303, response.body);
  assert.equal(response.headers.location, path);
}
