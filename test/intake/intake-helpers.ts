import assert from 'node:assert/strict';
import { solveChallenge } from 'altcha-lib/v1';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, Tenant } from '../helpers/test-app.js';
import { multipartBody, type Part } from '../helpers/multipart.js';

export interface CreatedLink {
  id: string;
  token: string;
  url: string;
  qrUrl: string;
  version: number;
}

export async function createIntakeLink(tenant: Tenant, body: Record<string, unknown> = { name: 'Block B, front door' }): Promise<CreatedLink> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/intake-links', payload: body });
  assert.equal(created.statusCode, 201, created.body);
  return created.json();
}

/** The form page's challenge, solved as the page's script solves it: the ALTCHA payload to send. */
export async function solvedChallenge(t: TestApp, token: string): Promise<string> {
  const form = await t.app.inject({ method: 'GET', url: `/intake/${token}` });
  assert.equal(form.statusCode, 200, form.body);
  return solve(form.body);
}

export async function solve(formHtml: string): Promise<string> {
  const encoded = /data-challenge="([^"]+)"/.exec(formHtml)?.[1];
  assert.ok(encoded, 'the form carries its challenge');
  const challenge = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  assert.ok(solution, 'the challenge has a solution');
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature })).toString('base64');
}

/** Posts the form as a browser does: the proof-of-work and the honeypot first, then the fields, then the photos. */
export function postForm(t: TestApp, token: string, parts: readonly Part[], headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const body = multipartBody(parts);
  return t.app.inject({ method: 'POST', url: `/intake/${token}`, payload: body.payload, headers: { ...body.headers, ...headers } });
}

export function formFields(altcha: string, fields: Record<string, string> = {}): Part[] {
  const values = { description: 'Water is leaking under the kitchen sink.', requesterName: 'Tess Tenant', requesterEmail: 'tess@example.com', address: 'Flat 4B', ...fields };
  return [{ name: 'altcha', value: altcha }, { name: 'website', value: '' }, ...Object.entries(values).map(([name, value]) => ({ name, value }))];
}

/** The status page's token from a 303 of the form. */
export function statusPathOf(answer: LightMyRequestResponse): string {
  assert.equal(answer.statusCode, 303, answer.body);
  const location = String(answer.headers.location);
  assert.match(location, /^\/intake\/status\/wrs_[A-Za-z0-9_-]{43}$/);
  return location;
}

export async function countRows(t: TestApp, table: 'work_requests' | 'attachments' | 'intake_used_solutions'): Promise<number> {
  const row = await t.context.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
