import type { FastifyRequest } from 'fastify';
import { AppError, errors, type FieldError } from '../errors.js';
import { formParts, isMultipart, type MultipartLimits } from '../http/multipart.js';
import type { AttachmentService, ReceivedUpload } from '../attachments/service.js';
import type { IntakeFields, SpentSolution } from '../requests/service.js';
import type { IntakeLinksTable } from '../requests/tables.js';
import type { ProofOfWork } from './proof-of-work.js';
import { MAX_INTAKE_PHOTOS } from './schemas.js';

export const PHOTO_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif']);

/** The form's text fields, each with its largest length in characters. */
const TEXT_FIELDS = { description: 5000, requesterName: 200, requesterEmail: 254, requesterPhone: 40, address: 500 } as const;
type TextField = keyof typeof TEXT_FIELDS;
const HONEYPOT = 'website';
const SOLUTION = 'altcha';
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^[0-9+() .-]{3,40}$/;

/** What a multipart submission may carry: five photos of the attachment limit, the form's few fields (UTF-8: up to 4 bytes a character). */
export function submissionLimits(maxFileBytes: number): MultipartLimits {
  return { maxFileBytes, maxFiles: MAX_INTAKE_PHOTOS, maxFields: 10, maxFieldBytes: 4 * TEXT_FIELDS.description };
}

/** A submission read whole and checked: its photos received (checked from their bytes, not yet visible). */
export interface Submission {
  fields: IntakeFields;
  photos: ReceivedUpload[];
  solution: SpentSolution;
}

/** What the requester typed, to show the form again with it when the submission is refused. */
export type TypedValues = Partial<Record<TextField, string>>;

/** A refusal that keeps what was typed, for the form shown again. */
export class RefusedSubmission extends Error {
  constructor(
    override readonly cause: AppError,
    readonly values: TypedValues,
  ) {
    super(cause.detail);
  }
}

export interface SubmissionDeps {
  attachments: AttachmentService;
  proofOfWork: ProofOfWork;
  limits: MultipartLimits;
}

/**
 * Reads a submission to `link`, as `multipart/form-data` (the form) or JSON (a kiosk, an app), for the
 * request `requestId` it will file. All or nothing: on any refusal the photos received so far are
 * discarded. The proof-of-work must arrive before any photo, as the form sends it, and is checked
 * before the first photo's bytes are read: a bot's body costs the service one HMAC, never a photo's
 * bytes. (The text fields are read first either way, so a refused form shows again with them.)
 */
export async function readSubmission(request: FastifyRequest, link: IntakeLinksTable, requestId: string, deps: SubmissionDeps): Promise<Submission> {
  const values: TypedValues = {};
  const photos: ReceivedUpload[] = [];
  let payload: string | undefined;
  let solution: SpentSolution | undefined;
  let honeypot = '';
  const spend = async (): Promise<SpentSolution> => {
    solution ??= payload === undefined ? undefined : await deps.proofOfWork.check(payload.trim(), link.id);
    if (!solution) throw proofOfWorkInvalid();
    return solution;
  };
  try {
    if (isMultipart(request)) {
      for await (const part of formParts(request, deps.limits)) {
        if (part.kind === 'field') {
          if (part.name === SOLUTION) payload = part.value;
          else if (part.name === HONEYPOT) honeypot = part.value;
          else if (part.name in TEXT_FIELDS) values[part.name as TextField] = part.value;
          continue;
        }
        if (part.filename === '') {
          for await (const _ of part.bytes); // the empty part a browser sends when no photo was chosen
          continue;
        }
        if (part.name !== 'photos') throw errors.validation([{ field: `body.${part.name}`, message: 'is not a field of this form: photos are sent as "photos"' }]);
        if (payload === undefined) throw new AppError('malformed_request', `Send the "${SOLUTION}" field (the solved proof-of-work) before the photos, as the form does.`);
        await spend();
        photos.push(await deps.attachments.receiveForRequest(link.org_id, requestId, { filename: part.filename.slice(0, 255), contentType: part.mediaType, contentLength: undefined, body: part.bytes }, PHOTO_TYPES));
      }
    } else {
      const body = request.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw errors.validation([{ field: 'body', message: 'must be a JSON object' }]);
      for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
        if (name !== SOLUTION && name !== HONEYPOT && !(name in TEXT_FIELDS)) throw errors.validation([{ field: `body.${name}`, message: 'is not a field of this form' }]);
        if (typeof value !== 'string') throw errors.validation([{ field: `body.${name}`, message: 'must be a string' }]);
      }
      const given = body as Record<string, string>;
      for (const name of Object.keys(TEXT_FIELDS) as TextField[]) if (given[name] !== undefined) values[name] = given[name];
      honeypot = given[HONEYPOT] ?? '';
      payload = given[SOLUTION];
    }
    const fields = checkFields(values, honeypot);
    return { fields, photos, solution: await spend() };
  } catch (error) {
    await Promise.all(photos.map((photo) => deps.attachments.discard(photo)));
    throw error instanceof AppError ? new RefusedSubmission(error, values) : error;
  }
}

function checkFields(values: TypedValues, honeypot: string): IntakeFields {
  const problems: FieldError[] = [];
  const text = (name: TextField): string | null => {
    const value = values[name]?.trim() ?? '';
    if (value.length > TEXT_FIELDS[name]) problems.push({ field: `body.${name}`, message: `must be at most ${TEXT_FIELDS[name].toLocaleString('en')} characters` });
    return value.length > 0 ? value : null;
  };
  const description = text('description');
  const requesterName = text('requesterName');
  const requesterEmail = text('requesterEmail');
  const requesterPhone = text('requesterPhone');
  const address = text('address');
  if (!description) problems.push({ field: 'body.description', message: 'is required: describe the problem' });
  if (!requesterName) problems.push({ field: 'body.requesterName', message: 'is required: give your name' });
  if (requesterEmail && !EMAIL.test(requesterEmail)) problems.push({ field: 'body.requesterEmail', message: 'must be an email address' });
  if (requesterPhone && !PHONE.test(requesterPhone)) problems.push({ field: 'body.requesterPhone', message: 'must be a phone number (digits, spaces and + ( ) . -)' });
  // A person never sees this field; a robot filling every field does.
  if (honeypot !== '') problems.push({ field: `body.${HONEYPOT}`, message: 'must be left empty' });
  if (problems.length > 0) throw errors.validation(problems, `The report could not be sent: ${problems.map((p) => `${p.field.slice(5)} ${p.message}`).join('; ')}.`);
  return { description: description!, requesterName: requesterName!, requesterEmail, requesterPhone, address };
}

function proofOfWorkInvalid(): AppError {
  return new AppError('proof_of_work_invalid', 'The form’s proof-of-work is missing, wrong or expired: load the form again (with JavaScript allowed) and send it from there.');
}
