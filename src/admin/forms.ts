import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { expiryFromDuration } from '../keys/api-keys.js';
import type { Scopes } from '../keys/scopes.js';
import { EXPIRY_CHOICES, type ExpiryChoice, type KeyFormState } from './pages.js';
import { newSecretToken } from './service.js';

/** A parsed urlencoded form: repeated fields (checkboxes) arrive as arrays. */
export type Form = Record<string, string | string[] | undefined>;

/** Tokens we mint with newSecretToken (256 bits, base64url). */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function formOf(request: FastifyRequest): Form {
  const body = request.body;
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Form) : {};
}

/** A single text field; repeated fields and non-strings read as empty. */
export function text(form: Form, name: string): string {
  const value = form[name];
  return typeof value === 'string' ? value : '';
}

function list(form: Form, name: string): string[] {
  const value = form[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}

export function emptyKeyForm(): KeyFormState {
  return { name: '', scopes: [], expiry: 'never', expiresOn: '', submissionId: newSecretToken(), errors: {} };
}

/** Reads the create-key form; problems the form alone can show land in `errors`. */
export function readKeyForm(form: Form, scopes: Scopes): KeyFormState {
  const expiryRaw = text(form, 'expiry') || 'never';
  const state: KeyFormState = {
    name: text(form, 'name').slice(0, 500),
    scopes: list(form, 'scopes'),
    expiry: (EXPIRY_CHOICES.some((c) => c.value === expiryRaw) ? expiryRaw : 'never') as ExpiryChoice,
    expiresOn: text(form, 'expiresOn').slice(0, 20),
    submissionId: text(form, 'submission'),
    errors: {},
  };
  if (state.name.trim() === '') state.errors.name = 'Give the key a name.';
  const unknown = state.scopes.filter((s) => !scopes.has(s));
  if (state.scopes.length === 0) state.errors.scopes = 'Choose at least one scope.';
  else if (unknown.length > 0) state.errors.scopes = `Unknown scope: ${unknown.join(', ')}.`;
  // A form without a usable submission id still works; it just gets no double-submit protection.
  if (!TOKEN_PATTERN.test(state.submissionId)) state.submissionId = newSecretToken();
  return state;
}

/** The absolute expiry the form asks for (null for never); problems land in `form.errors`. */
export function resolveKeyExpiry(form: KeyFormState, clock: Clock): string | null {
  switch (form.expiry) {
    case 'never':
      return null;
    case 'date': {
      const end = /^\d{4}-\d{2}-\d{2}$/.test(form.expiresOn) ? new Date(`${form.expiresOn}T23:59:59.999Z`) : undefined;
      // The round trip rejects dates that do not exist (2026-02-30).
      if (!end || Number.isNaN(end.getTime()) || end.toISOString().slice(0, 10) !== form.expiresOn) {
        form.errors.expiresOn = 'Choose a date, or another expiry option.';
        return null;
      }
      if (end.getTime() <= clock.now().getTime()) {
        form.errors.expiresOn = 'The date must be today or later.';
        return null;
      }
      return end.toISOString();
    }
    default:
      return expiryFromDuration(form.expiry, clock);
  }
}
