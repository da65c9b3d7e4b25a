import { Type } from '@sinclair/typebox';
import type { Scope } from '../keys/scopes.js';
import { ERROR_CODES } from './errors.js';

const ProblemRef = Type.Ref('Problem');

/** Security requirement naming the scope an operation needs; the auth hook reads the same scope from route config. */
export function requiresScope(scope: Scope) {
  return { security: [{ bearerAuth: [scope] }] };
}

/** Problem responses an operation can give, documented from the error catalogue. */
export function problems(...statuses: number[]) {
  const all = [...new Set([401, 403, ...statuses])].sort();
  return Object.fromEntries(
    all.map((status) => {
      const codes = Object.entries(ERROR_CODES).filter(([, v]) => v.status === status).map(([code]) => code);
      return [status, { ...ProblemRef, description: `Problem: ${codes.join(', ')}` }];
    }),
  );
}

export const ETagHeader = { etag: Type.String({ description: 'Entity tag of the returned version; send it in If-Match to update safely.' }) };
