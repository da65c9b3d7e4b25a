import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { recordBody, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { sampleFiles } from '../helpers/files.js';
import { ERROR_CODES } from '../../src/errors.js';

interface Answer {
  $ref?: string;
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: { $ref?: string } }> };
  security?: unknown[];
  deprecated?: boolean;
  responses: Record<string, Answer>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }>; responses: Record<string, Answer> };
}

const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /.well-known/jwks.json': 'getJwks',
  'POST /api/v1/categories': 'createCategory',
  'GET /api/v1/categories': 'listCategories',
  'GET /api/v1/categories/{id}': 'getCategory',
  'PATCH /api/v1/categories/{id}': 'updateCategory',
  'DELETE /api/v1/categories/{id}': 'deleteCategory',
  'POST /api/v1/records': 'createRecord',
  'GET /api/v1/records': 'listRecords',
  'GET /api/v1/records/{id}': 'getRecord',
  'PATCH /api/v1/records/{id}': 'updateRecord',
  'GET /api/v1/records/{id}/history': 'listRecordHistory',
  'GET /api/v1/records/{id}/events': 'listRecordEvents',
  'POST /api/v1/records/{id}/assign': 'assignRecord',
  'POST /api/v1/records/{id}/start': 'startRecord',
  'POST /api/v1/records/{id}/hold': 'holdRecord',
  'POST /api/v1/records/{id}/resume': 'resumeRecord',
  'POST /api/v1/records/{id}/complete': 'completeRecord',
  'POST /api/v1/records/{id}/close': 'closeRecord',
  'POST /api/v1/records/{id}/cancel': 'cancelRecord',
  'POST /api/v1/records/{id}/reopen': 'reopenRecord',
  'POST /api/v1/records/{id}/comments': 'createRecordComment',
  'GET /api/v1/records/{id}/comments': 'listRecordComments',
  'POST /api/v1/records/{id}/attachments': 'uploadRecordAttachment',
  'GET /api/v1/records/{id}/attachments': 'listRecordAttachments',
  'GET /api/v1/records/{id}/attachments/{attachmentId}': 'getRecordAttachment',
  'DELETE /api/v1/records/{id}/attachments/{attachmentId}': 'deleteRecordAttachment',
  'GET /api/v1/records/{id}/attachments/{attachmentId}/content': 'downloadRecordAttachment',
  'HEAD /api/v1/records/{id}/attachments/{attachmentId}/content': 'headRecordAttachment',
  'POST /api/v1/locations': 'createLocation',
  'GET /api/v1/locations': 'listLocations',
  'GET /api/v1/locations/{id}': 'getLocation',
  'PATCH /api/v1/locations/{id}': 'updateLocation',
  'DELETE /api/v1/locations/{id}': 'deleteLocation',
  'POST /api/v1/assets': 'createAsset',
  'GET /api/v1/assets': 'listAssets',
  'GET /api/v1/assets/{id}': 'getAsset',
  'PATCH /api/v1/assets/{id}': 'updateAsset',
  'DELETE /api/v1/assets/{id}': 'deleteAsset',
  'GET /api/v1/assets/{id}/records': 'listAssetRecords',
  'POST /api/v1/assets/{id}/retire': 'retireAsset',
  'POST /api/v1/custom-fields': 'createCustomField',
  'GET /api/v1/custom-fields': 'listCustomFields',
  'GET /api/v1/custom-fields/{id}': 'getCustomField',
  'PATCH /api/v1/custom-fields/{id}': 'updateCustomField',
  'POST /api/v1/checklists': 'createChecklist',
  'GET /api/v1/checklists': 'listChecklists',
  'GET /api/v1/checklists/{id}': 'getChecklist',
  'PATCH /api/v1/checklists/{id}': 'updateChecklist',
  'GET /api/v1/records/{id}/checklists': 'listRecordChecklists',
  'POST /api/v1/records/{id}/checklists': 'attachRecordChecklist',
  'PUT /api/v1/records/{id}/checklists/{checklistId}/items/{key}': 'answerChecklistItem',
  'POST /api/v1/meters': 'createMeter',
  'GET /api/v1/meters': 'listMeters',
  'GET /api/v1/meters/{id}': 'getMeter',
  'PATCH /api/v1/meters/{id}': 'updateMeter',
  'DELETE /api/v1/meters/{id}': 'deleteMeter',
  'POST /api/v1/meters/{id}/readings': 'postMeterReadings',
  'GET /api/v1/meters/{id}/readings': 'listMeterReadings',
  'POST /api/v1/schedules': 'createSchedule',
  'POST /api/v1/schedules/preview': 'previewSchedule',
  'GET /api/v1/schedules': 'listSchedules',
  'GET /api/v1/schedules/{id}': 'getSchedule',
  'PATCH /api/v1/schedules/{id}': 'updateSchedule',
  'DELETE /api/v1/schedules/{id}': 'deleteSchedule',
  'POST /api/v1/schedules/{id}/pause': 'pauseSchedule',
  'POST /api/v1/schedules/{id}/resume': 'resumeSchedule',
  'GET /api/v1/schedules/{id}/occurrences': 'listScheduleOccurrences',
  'POST /api/v1/schedules/{id}/occurrences/{key}/skip': 'skipScheduleOccurrence',
  'POST /api/v1/people': 'createPerson',
  'GET /api/v1/people': 'listPeople',
  'GET /api/v1/people/{id}': 'getPerson',
  'PATCH /api/v1/people/{id}': 'updatePerson',
  'DELETE /api/v1/people/{id}': 'deletePerson',
  'POST /api/v1/teams': 'createTeam',
  'GET /api/v1/teams': 'listTeams',
  'GET /api/v1/teams/{id}': 'getTeam',
  'PATCH /api/v1/teams/{id}': 'updateTeam',
  'DELETE /api/v1/teams/{id}': 'deleteTeam',
  'POST /api/v1/vendors': 'createVendor',
  'GET /api/v1/vendors': 'listVendors',
  'GET /api/v1/vendors/{id}': 'getVendor',
  'PATCH /api/v1/vendors/{id}': 'updateVendor',
  'DELETE /api/v1/vendors/{id}': 'deleteVendor',
  'POST /api/v1/parts': 'createPart',
  'GET /api/v1/parts': 'listParts',
  'GET /api/v1/parts/{id}': 'getPart',
  'PATCH /api/v1/parts/{id}': 'updatePart',
  'GET /api/v1/parts/{id}/stock': 'listPartStock',
  'POST /api/v1/parts/{id}/movements': 'createStockMovement',
  'GET /api/v1/parts/{id}/movements': 'listStockMovements',
  'POST /api/v1/records/{id}/labor': 'createRecordLabor',
  'GET /api/v1/records/{id}/labor': 'listRecordLabor',
  'POST /api/v1/records/{id}/parts': 'createRecordPart',
  'GET /api/v1/records/{id}/parts': 'listRecordParts',
  'DELETE /api/v1/records/{id}/parts/{lineId}': 'deleteRecordPart',
  'POST /api/v1/records/{id}/costs': 'createRecordCost',
  'GET /api/v1/records/{id}/costs': 'listRecordCosts',
  'GET /api/v1/cost-lines': 'listCostLines',
  'POST /api/v1/cost-lines/{id}/post': 'postCostLine',
  'POST /api/v1/cost-lines/{id}/reverse': 'reverseCostLine',
  'POST /api/v1/requests': 'createWorkRequest',
  'GET /api/v1/requests': 'listWorkRequests',
  'GET /api/v1/requests/{id}': 'getWorkRequest',
  'POST /api/v1/requests/{id}/approve': 'approveWorkRequest',
  'POST /api/v1/requests/{id}/reject': 'rejectWorkRequest',
  'POST /api/v1/requests/{id}/cancel': 'cancelWorkRequest',
  'GET /api/v1/requests/{id}/attachments': 'listWorkRequestAttachments',
  'POST /api/v1/requests/{id}/attachments': 'uploadWorkRequestAttachment',
  'POST /api/v1/intake-links': 'createIntakeLink',
  'GET /api/v1/intake-links': 'listIntakeLinks',
  'GET /api/v1/intake-links/{id}': 'getIntakeLink',
  'PATCH /api/v1/intake-links/{id}': 'updateIntakeLink',
  'DELETE /api/v1/intake-links/{id}': 'deleteIntakeLink',
  'POST /api/v1/intake-links/{id}/rotate': 'rotateIntakeLink',
  'POST /api/v1/records/{id}/access-links': 'createRecordAccessLink',
  'GET /api/v1/records/{id}/access-links': 'listRecordAccessLinks',
  'DELETE /api/v1/records/{id}/access-links/{linkId}': 'revokeRecordAccessLink',
  'GET /api/v1/records/{id}/proof': 'getRecordProof',
  'GET /api/v1/proofs/{proofId}': 'getProof',
  'GET /api/v1/transparency/checkpoint': 'getTransparencyCheckpoint',
  'GET /api/v1/transparency/verifier-key': 'getTransparencyVerifierKey',
  'GET /api/v1/transparency/inclusion': 'getInclusionProof',
  'GET /api/v1/transparency/consistency': 'getConsistencyProof',
  'POST /api/v1/webhooks': 'createWebhook',
  'GET /api/v1/webhooks': 'listWebhooks',
  'GET /api/v1/webhooks/{id}': 'getWebhook',
  'PATCH /api/v1/webhooks/{id}': 'updateWebhook',
  'DELETE /api/v1/webhooks/{id}': 'deleteWebhook',
  'POST /api/v1/webhooks/{id}/rotate-secret': 'rotateWebhookSecret',
  'POST /api/v1/webhooks/{id}/ping': 'pingWebhook',
  'GET /api/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /api/v1/webhooks/{id}/deliveries/{deliveryId}': 'getWebhookDelivery',
  'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': 'redeliverWebhookDelivery',
  'GET /api/v1/events': 'listEvents',
};

/** Response headers the service sends (item by item in docs/api.md): each must be declared where it is sent. */
const CONTRACT_HEADERS = ['etag', 'location', 'www-authenticate', 'x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'x-idempotent-replay', 'link', 'deprecation', 'sunset'];

/** Media types whose bodies are JSON, validated against the documented schema. */
const JSON_MEDIA_TYPE = /^application\/(?:[a-z.+-]+\+)?json$/;

const DEPRECATION_HEADERS = ['deprecation', 'sunset', 'link'];

/**
 * Checks real answers against the document: the status is documented for the operation, the body
 * validates against the schema documented for that status and media type (Ajv, JSON Schema 2020-12
 * as OpenAPI 3.1 uses, with the document's components), and every contract header sent is declared.
 */
class ContractChecker {
  readonly problems: string[] = [];
  readonly calledOperations = new Set<string>();
  private readonly ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Document) {
    // The components under one id; a response schema's `#/components/...` references point there.
    this.ajv.addSchema({ $id: 'https://wo.test/openapi.json', components: document.components });
  }

  operationOf(method: string, url: string): { template: string; operation: Operation } | undefined {
    const path = url.split('?')[0]!;
    for (const [template, item] of Object.entries(this.document.paths)) {
      const pattern = new RegExp(`^${template.replace(/\./g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (pattern.test(path) && item[method.toLowerCase()]) return { template, operation: item[method.toLowerCase()]! };
    }
    return undefined;
  }

  check(method: string, url: string, response: LightMyRequestResponse): void {
    const found = this.operationOf(method, url);
    if (!found) {
      this.problems.push(`${method} ${url}: no such operation in the document`);
      return;
    }
    this.calledOperations.add(found.operation.operationId ?? `${method} ${found.template}`);
    const where = `${method} ${found.template} → ${response.statusCode}`;
    const status = String(response.statusCode);
    const answer = this.resolve(found.operation.responses[status] ?? found.operation.responses[`${status[0]}XX`] ?? found.operation.responses.default);
    if (!answer) {
      this.problems.push(`${where}: status not documented (${response.body.slice(0, 120)})`);
      return;
    }
    // A deprecated operation's problem answers are the shared components/responses, which cannot
    // declare one operation's headers: its Deprecation, Sunset and Link are declared on its
    // successful answers and named in its description.
    const announcedElsewhere = found.operation.deprecated === true && response.statusCode >= 400 ? DEPRECATION_HEADERS : [];
    for (const header of CONTRACT_HEADERS) {
      if (response.headers[header] !== undefined && !answer.headers?.[header] && !announcedElsewhere.includes(header)) this.problems.push(`${where}: sends ${header}, not declared`);
    }
    // Every list's page states its neighbours.
    const isList = (found.operation.parameters ?? []).some((parameter) => parameter.in === 'query' && parameter.name === 'offset');
    if (isList && response.statusCode === 200 && !/rel="first"/.test(String(response.headers.link ?? ''))) this.problems.push(`${where}: a list answer without its pages in Link`);
    if (response.statusCode === 204 || response.statusCode === 304 || response.body.length === 0) return;
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim();
    const documented = answer.content?.[mediaType];
    if (!documented) {
      this.problems.push(`${where}: sent ${mediaType}, documented ${Object.keys(answer.content ?? {}).join(', ') || 'no body'}`);
      return;
    }
    const body = JSON_MEDIA_TYPE.test(mediaType) ? response.json() : mediaType.startsWith('text/') ? response.body : undefined;
    if (body === undefined || !documented.schema) return;
    const validate = this.validatorFor(documented.schema);
    if (!validate(body)) this.problems.push(`${where}: body does not match the schema: ${this.ajv.errorsText(validate.errors)}`);
  }

  /** A shared answer (`$ref` to `components/responses`) as it is defined there. */
  private resolve(answer: Answer | undefined): Answer | undefined {
    const name = answer?.$ref?.replace('#/components/responses/', '');
    return name === undefined ? answer : this.document.components.responses[name];
  }

  private validatorFor(schema: unknown): ValidateFunction {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"https://wo.test/openapi.json#/components/');
    let validate = this.validators.get(text);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(text) as object);
      this.validators.set(text, validate);
    }
    return validate;
  }
}

/**
 * Checks the OpenAPI document against what the service really answers: a tour calls every
 * documented operation (the test fails when one is left out) with successes and the usual
 * failures, and every answer must be documented for its operation: status, media type, body and
 * headers. So the document cannot drift from the behaviour, not only from the schemas.
 */
describe('the OpenAPI document describes the answers the service gives', () => {
  let t: TestApp;
  let document: Document;
  let checker: ContractChecker;
  let hook: WebhookReceiver;

  before(async () => {
    t = await startTestApp('sqlite', { env: { WO_WEBHOOK_IDLE_POLL_MS: '10' } });
    for (const job of t.context.backgroundJobs) job.start();
    hook = await startReceiver();
    document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    checker = new ContractChecker(document);
  });
  after(async () => {
    await t.close();
    await hook.close();
  });

  async function call(tenant: Tenant | undefined, options: InjectOptions & { method: string; url: string }): Promise<LightMyRequestResponse> {
    const response = tenant ? await tenant.request(options) : await t.app.inject(options);
    checker.check(options.method, options.url, response);
    return response;
  }

  it('for every operation, status, media type and headers of each answer are documented', async () => {
    const tenant = await t.newTenant();
    const reader = await t.newTenant(['records:read']);
    const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => call(tenant, { method: 'POST', url, payload: payload as never, headers });
    const bareAction = (url: string) => call(tenant, { method: 'POST', url });
    const json = (response: LightMyRequestResponse) => response.json() as { id: string } & Record<string, unknown>;

    // Operations and health.
    await call(undefined, { method: 'GET', url: '/healthz' });
    await call(undefined, { method: 'GET', url: '/readyz' });
    await call(undefined, { method: 'GET', url: '/.well-known/jwks.json' });

    // Categories, with the failures every write shares.
    const key = randomUUID();
    const category = json(await post('/api/v1/categories', { name: 'Plumbing' }, { 'idempotency-key': key }));
    assert.equal((await post('/api/v1/categories', { name: 'Plumbing' }, { 'idempotency-key': key })).headers['x-idempotent-replay'], 'true');
    assert.equal((await post('/api/v1/categories', { name: 'Electrical' }, { 'idempotency-key': key })).statusCode, 422);
    assert.equal((await call(tenant, { method: 'POST', url: '/api/v1/categories', payload: '{"name":', headers: { 'content-type': 'application/json' } })).statusCode, 400);
    assert.equal((await call(tenant, { method: 'POST', url: '/api/v1/categories', payload: 'name=x', headers: { 'content-type': 'text/plain' } })).statusCode, 415);
    assert.equal((await post('/api/v1/categories', { name: 'x'.repeat(2 * 1024 * 1024) })).statusCode, 413);
    assert.equal((await post('/api/v1/categories', { name: 'Plumbing' })).statusCode, 409);
    assert.equal((await call(undefined, { method: 'GET', url: '/api/v1/categories' })).statusCode, 401);
    assert.equal((await call(reader, { method: 'GET', url: '/api/v1/categories' })).statusCode, 403);
    await call(tenant, { method: 'GET', url: '/api/v1/categories?limit=0' });
    const categoryRead = await call(tenant, { method: 'GET', url: `/api/v1/categories/${category.id}` });
    assert.equal((await call(tenant, { method: 'GET', url: `/api/v1/categories/${category.id}`, headers: { 'if-none-match': `W/${String(categoryRead.headers.etag)}` } })).statusCode, 304);
    await call(tenant, { method: 'GET', url: '/api/v1/categories/cat_missing' });
    await call(tenant, { method: 'PATCH', url: `/api/v1/categories/${category.id}`, payload: { description: 'Pipes' }, headers: { 'if-match': '"1"' } });
    assert.equal((await call(tenant, { method: 'PATCH', url: `/api/v1/categories/${category.id}`, payload: { description: 'x' }, headers: { 'if-match': '"1"' } })).statusCode, 412);
    const spare = json(await post('/api/v1/categories', { name: 'Spare' }));
    await call(tenant, { method: 'DELETE', url: `/api/v1/categories/${spare.id}` });

    // Locations and assets.
    const site = json(await post('/api/v1/locations', { name: 'Harbour site' }));
    const room = json(await post('/api/v1/locations', { name: 'Boiler room', parentId: site.id }));
    await call(tenant, { method: 'GET', url: '/api/v1/locations' });
    await call(tenant, { method: 'GET', url: `/api/v1/locations/${site.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/locations/${room.id}`, payload: { name: 'Plant room' } });
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/locations/${site.id}` })).statusCode, 409);
    const asset = json(await post('/api/v1/assets', { name: 'Boiler', tag: 'B-1', locationId: room.id }));
    await call(tenant, { method: 'GET', url: '/api/v1/assets?q=Boil' });
    await call(tenant, { method: 'GET', url: `/api/v1/assets/${asset.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/assets/${asset.id}`, payload: { model: 'X2' }, headers: { 'content-type': 'application/merge-patch+json' } });
    await call(tenant, { method: 'GET', url: `/api/v1/assets/${asset.id}/records` });

    // Custom fields.
    const field = json(await post('/api/v1/custom-fields', { key: 'floor', label: 'Floor', entity: 'record', type: 'number' }));
    assert.equal((await post('/api/v1/custom-fields', { key: 'floor', label: 'Floor', entity: 'record', type: 'number' })).statusCode, 409);
    await call(tenant, { method: 'GET', url: '/api/v1/custom-fields?entity=record' });
    await call(tenant, { method: 'GET', url: `/api/v1/custom-fields/${field.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/custom-fields/${field.id}`, payload: { label: 'Storey' }, headers: { 'if-match': '"1"' } });
    await call(tenant, { method: 'GET', url: '/api/v1/records?cf.floor[gte]=2' });

    // Checklists: a template, a work order given it, an answer, the completion gate.
    const checklist = json(await post('/api/v1/checklists', { name: 'Boiler', items: [{ key: 'pressure', label: 'Pressure', type: 'number', required: true, min: 1, max: 2 }] }));
    await call(tenant, { method: 'GET', url: '/api/v1/checklists' });
    await call(tenant, { method: 'GET', url: `/api/v1/checklists/${checklist.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/checklists/${checklist.id}`, payload: { name: 'Boiler check' }, headers: { 'if-match': '"1"' } });
    const inspected = json(await post('/api/v1/records', recordBody(category.id, { assignee: 'Technician 1' })));
    await call(tenant, { method: 'POST', url: `/api/v1/records/${inspected.id}/checklists`, payload: { checklistId: checklist.id } });
    await call(tenant, { method: 'POST', url: `/api/v1/records/${inspected.id}/checklists`, payload: { checklistId: 'chk_missing' } });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${inspected.id}/checklists` });
    await call(tenant, { method: 'PUT', url: `/api/v1/records/${inspected.id}/checklists/${checklist.id}/items/pressure`, payload: { value: 'high' } });
    await call(tenant, { method: 'POST', url: `/api/v1/records/${inspected.id}/start`, payload: {} });
    assert.equal((await call(tenant, { method: 'POST', url: `/api/v1/records/${inspected.id}/complete`, payload: { resolutionNotes: 'Done' } })).statusCode, 409);
    await call(tenant, { method: 'PUT', url: `/api/v1/records/${inspected.id}/checklists/${checklist.id}/items/pressure`, payload: { value: 1.5 } });

    // Meters and their readings.
    const meter = json(await post('/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative', assetId: asset.id }));
    assert.equal((await post('/api/v1/meters', { name: 'Run hours', unit: 'h', kind: 'cumulative', assetId: 'ast_missing' })).statusCode, 422);
    await call(tenant, { method: 'GET', url: `/api/v1/meters?assetId=${asset.id}` });
    await call(tenant, { method: 'GET', url: `/api/v1/meters/${meter.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/meters/${meter.id}`, payload: { name: 'Engine hours' }, headers: { 'if-match': '"1"' } });
    const readingsKey = randomUUID();
    assert.equal((await post(`/api/v1/meters/${meter.id}/readings`, { readings: [{ value: 10, externalId: 'a' }, { value: 10, externalId: 'a' }] }, { 'idempotency-key': readingsKey })).statusCode, 200);
    assert.equal((await post(`/api/v1/meters/${meter.id}/readings`, { readings: [{ value: 10, externalId: 'a' }, { value: 10, externalId: 'a' }] }, { 'idempotency-key': readingsKey })).headers['x-idempotent-replay'], 'true');
    assert.equal((await post(`/api/v1/meters/${meter.id}/readings`, { readings: [{ value: 5 }] })).statusCode, 422);
    assert.equal((await post(`/api/v1/meters/${meter.id}/readings`, { readings: [] })).statusCode, 400);
    await call(tenant, { method: 'GET', url: `/api/v1/meters/${meter.id}/readings` });
    await call(tenant, { method: 'GET', url: '/api/v1/meters/mtr_missing/readings' });
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/meters/${meter.id}` })).statusCode, 204);

    // Preventive-maintenance schedules.
    const scheduleBody = { name: 'Monthly filters', template: { categoryId: category.id, description: 'Replace the filters' }, triggers: [{ type: 'calendar', rrule: 'FREQ=MONTHLY;BYDAY=1MO', start: '2030-01-07T08:00:00', timezone: 'Europe/Berlin' }], leadTime: 'P7D' };
    assert.equal((await post('/api/v1/schedules/preview', scheduleBody)).statusCode, 200);
    const schedule = json(await post('/api/v1/schedules', scheduleBody));
    assert.equal((await post('/api/v1/schedules', { ...scheduleBody, triggers: [{ type: 'calendar', rrule: 'FREQ=NEVER', start: '2030-01-07T08:00:00', timezone: 'Europe/Berlin' }] })).statusCode, 422);
    await call(tenant, { method: 'GET', url: '/api/v1/schedules?status=ACTIVE' });
    await call(tenant, { method: 'GET', url: `/api/v1/schedules/${schedule.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/schedules/${schedule.id}`, payload: { name: 'Monthly AHU filters' }, headers: { 'if-match': '"1"' } });
    await call(tenant, { method: 'GET', url: `/api/v1/schedules/${schedule.id}/occurrences?from=2030-01-01T00:00:00Z&to=2030-06-01T00:00:00Z` });
    assert.equal((await post(`/api/v1/schedules/${schedule.id}/occurrences/2030-02-04T08:00:00/skip`, {})).statusCode, 200);
    assert.equal((await post(`/api/v1/schedules/${schedule.id}/occurrences/2030-02-04T08:00:00/skip`, {})).statusCode, 409);
    assert.equal((await post(`/api/v1/schedules/${schedule.id}/pause`, {})).statusCode, 200);
    assert.equal((await post(`/api/v1/schedules/${schedule.id}/resume`, {})).statusCode, 200);
    await call(tenant, { method: 'GET', url: '/api/v1/schedules/sch_missing' });
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/schedules/${schedule.id}` })).statusCode, 204);

    // People, teams and vendors, assigned to a work order, and an access link to it.
    const ana = json(await post('/api/v1/people', { name: 'Ana Ruiz', trades: ['Plumbing'], hourlyRate: { amount: '42.50', currency: 'USD' } }));
    assert.equal((await post('/api/v1/people', { name: 'Bo', hourlyRate: { amount: '40.00', currency: 'EUR' } })).statusCode, 422);
    const crew = json(await post('/api/v1/teams', { name: 'Wet crew', memberIds: [ana.id] }));
    const acme = json(await post('/api/v1/vendors', { name: 'Acme Plumbing', trades: ['Plumbing'] }));
    await call(tenant, { method: 'GET', url: '/api/v1/people?trade=plumbing&active=true' });
    await call(tenant, { method: 'GET', url: '/api/v1/teams?q=wet' });
    await call(tenant, { method: 'GET', url: '/api/v1/vendors?trade=plumbing' });
    for (const [collection, item] of [['people', ana], ['teams', crew], ['vendors', acme]] as const) {
      await call(tenant, { method: 'GET', url: `/api/v1/${collection}/${item.id}` });
      await call(tenant, { method: 'GET', url: `/api/v1/${collection}/${collection.slice(0, 3)}_missing` });
    }
    await call(tenant, { method: 'PATCH', url: `/api/v1/people/${ana.id}`, payload: { phone: '+1 555 0100' }, headers: { 'if-match': '"1"' } });
    await call(tenant, { method: 'PATCH', url: `/api/v1/teams/${crew.id}`, payload: { name: 'Wet crew A' } });
    await call(tenant, { method: 'PATCH', url: `/api/v1/vendors/${acme.id}`, payload: { phone: '+1 555 0199' } });
    const leak = json(await post('/api/v1/records', recordBody(category.id, { assignees: [{ type: 'vendor', id: acme.id }, { type: 'team', id: crew.id }] })));
    await call(tenant, { method: 'GET', url: `/api/v1/records?assigneeId=${ana.id}` });
    await call(tenant, { method: 'GET', url: '/api/v1/records?unassigned=true' });
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/vendors/${acme.id}` })).statusCode, 409);
    const accessLink = json(await post(`/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id, expiresIn: 'P7D' }));
    assert.equal((await post(`/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id, expiresIn: 'P91D' })).statusCode, 400);
    await call(tenant, { method: 'GET', url: `/api/v1/records/${leak.id}/access-links` });
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/records/${leak.id}/access-links/${accessLink.id}` })).statusCode, 204);
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/records/${leak.id}/access-links/lnk_missing` })).statusCode, 404);
    assert.equal((await bareAction(`/api/v1/records/${leak.id}/cancel`)).statusCode, 200);
    for (const [collection, item] of [['vendors', acme], ['teams', crew], ['people', ana]] as const) {
      assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/${collection}/${item.id}` })).statusCode, 204, collection);
    }

    // Parts in stock, and what a work order cost, as lines an ERP posts (amounts in the tenant's USD).
    const store = json(await post('/api/v1/locations', { name: 'Storeroom' }));
    const part = json(await post('/api/v1/parts', { sku: 'CART-35', name: 'Cartridge 35 mm', unit: 'pcs', unitCost: { amount: '15.90', currency: 'USD' }, reorderPoint: '2' }));
    assert.equal((await post('/api/v1/parts', { sku: 'CART-35', name: 'Again', unit: 'pcs', unitCost: { amount: '1', currency: 'USD' } })).statusCode, 409);
    assert.equal((await post('/api/v1/parts', { sku: 'EUR-1', name: 'Euro', unit: 'pcs', unitCost: { amount: '1', currency: 'EUR' } })).statusCode, 422);
    await call(tenant, { method: 'GET', url: '/api/v1/parts?active=true' });
    await call(tenant, { method: 'GET', url: `/api/v1/parts/${part.id}` });
    await call(tenant, { method: 'GET', url: '/api/v1/parts/prt_missing' });
    await call(tenant, { method: 'PATCH', url: `/api/v1/parts/${part.id}`, payload: { name: 'Cartridge 35' }, headers: { 'if-match': '"1"' } });
    assert.equal((await post(`/api/v1/parts/${part.id}/movements`, { type: 'receive', locationId: store.id, quantity: '5' }, { 'idempotency-key': randomUUID() })).statusCode, 201);
    assert.equal((await post(`/api/v1/parts/${part.id}/movements`, { type: 'issue', locationId: store.id, quantity: '6' })).statusCode, 409);
    await call(tenant, { method: 'GET', url: `/api/v1/parts/${part.id}/stock` });
    await call(tenant, { method: 'GET', url: `/api/v1/parts/${part.id}/movements` });
    const job = json(await post('/api/v1/records', recordBody(category.id)));
    assert.equal((await post(`/api/v1/records/${job.id}/labor`, { minutes: 80, rate: { amount: '33.33', currency: 'USD' } })).statusCode, 201);
    assert.equal((await post(`/api/v1/records/${job.id}/labor`, { minutes: 80 })).statusCode, 422);
    const used = json(await post(`/api/v1/records/${job.id}/parts`, { partId: part.id, locationId: store.id, quantity: '2' }, { 'idempotency-key': randomUUID() }));
    const returned = json(await post(`/api/v1/records/${job.id}/parts`, { partId: part.id, locationId: store.id, quantity: '1' }));
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/records/${job.id}/parts/${returned.id}` })).statusCode, 204);
    const invoice = json(await post(`/api/v1/records/${job.id}/costs`, { description: 'Invoice 118', amount: { amount: '120.00', currency: 'USD' } }));
    assert.equal((await post(`/api/v1/records/${job.id}/costs`, { description: 'Float', amount: { amount: 12.5, currency: 'USD' } })).statusCode, 400);
    for (const lines of ['labor', 'parts', 'costs']) await call(tenant, { method: 'GET', url: `/api/v1/records/${job.id}/${lines}` });
    await call(tenant, { method: 'GET', url: `/api/v1/cost-lines?posted=false&recordId=${job.id}` });
    for (const line of [invoice, used]) assert.equal((await post(`/api/v1/cost-lines/${line.id}/post`, { erpDocumentId: 'INV-118' })).statusCode, 200);
    assert.equal((await post(`/api/v1/cost-lines/${invoice.id}/post`, { erpDocumentId: 'INV-119' })).statusCode, 409);
    assert.equal((await post('/api/v1/cost-lines/cst_missing/post', { erpDocumentId: 'INV-120' })).statusCode, 404);
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/records/${job.id}/parts/${used.id}` })).statusCode, 409);
    assert.equal((await bareAction(`/api/v1/cost-lines/${used.id}/reverse`)).statusCode, 201);
    assert.equal((await bareAction(`/api/v1/cost-lines/${used.id}/reverse`)).statusCode, 409);
    await call(tenant, { method: 'GET', url: `/api/v1/records/${job.id}` });

    // Work requests: filed, decided once.
    const asked = json(await post('/api/v1/requests', { description: 'The hallway light flickers', requesterName: 'Ann Tenant', requesterEmail: 'ann@example.com' }, { 'idempotency-key': randomUUID() }));
    assert.equal((await post('/api/v1/requests', { description: 'No name' })).statusCode, 400);
    await call(tenant, { method: 'GET', url: '/api/v1/requests?status=SUBMITTED&channel=api' });
    await call(tenant, { method: 'GET', url: `/api/v1/requests/${asked.id}` });
    await call(tenant, { method: 'GET', url: '/api/v1/requests/wrq_missing' });
    const requestPhoto = (mediaType: string) =>
      call(tenant, { method: 'POST', url: `/api/v1/requests/${asked.id}/attachments?filename=light.jpg`, payload: sampleFiles.jpeg(), headers: { 'content-type': mediaType } });
    assert.equal((await requestPhoto('image/jpeg')).statusCode, 201);
    assert.equal((await requestPhoto('image/png')).statusCode, 415);
    await call(tenant, { method: 'GET', url: `/api/v1/requests/${asked.id}/attachments` });
    assert.equal((await post(`/api/v1/requests/${asked.id}/approve`, {})).statusCode, 422);
    assert.equal((await post(`/api/v1/requests/${asked.id}/approve`, { categoryId: category.id, priority: 'HIGH' }, { 'if-match': '"2"' })).statusCode, 200);
    assert.equal((await post(`/api/v1/requests/${asked.id}/reject`, { reason: 'Too late' })).statusCode, 409);
    const unwanted = json(await post('/api/v1/requests', { description: 'Paint the door', requesterName: 'Bo' }));
    assert.equal((await post(`/api/v1/requests/${unwanted.id}/reject`, { reason: 'Not ours' })).statusCode, 200);
    const withdrawn = json(await post('/api/v1/requests', { description: 'Fixed itself', requesterName: 'Cy' }));
    assert.equal((await bareAction(`/api/v1/requests/${withdrawn.id}/cancel`)).statusCode, 200);
    assert.equal((await bareAction(`/api/v1/requests/${withdrawn.id}/cancel`)).statusCode, 409);

    // Intake links: the public form's token shown once, rotated, disabled, deleted.
    const intake = json(await post('/api/v1/intake-links', { name: 'Front door', categoryId: category.id }, { 'idempotency-key': randomUUID() }));
    assert.equal((await post('/api/v1/intake-links', { name: 'Nowhere', locationId: 'loc_missing' })).statusCode, 422);
    await call(tenant, { method: 'GET', url: '/api/v1/intake-links' });
    await call(tenant, { method: 'GET', url: `/api/v1/intake-links/${intake.id}` });
    await call(tenant, { method: 'GET', url: '/api/v1/intake-links/itk_missing' });
    assert.equal((await call(tenant, { method: 'PATCH', url: `/api/v1/intake-links/${intake.id}`, payload: { enabled: false }, headers: { 'if-match': '"1"' } })).statusCode, 200);
    assert.equal((await call(tenant, { method: 'PATCH', url: `/api/v1/intake-links/${intake.id}`, payload: { enabled: true }, headers: { 'if-match': '"1"' } })).statusCode, 412);
    assert.equal((await bareAction(`/api/v1/intake-links/${intake.id}/rotate`)).statusCode, 200);
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/intake-links/${intake.id}` })).statusCode, 204);
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/intake-links/${intake.id}` })).statusCode, 404);

    // Webhooks (the receiver on loopback).
    const webhook = json(await post('/api/v1/webhooks', { name: 'ERP', url: hook.url, events: ['record.created', 'record.proof_delivered'] }));
    await call(tenant, { method: 'GET', url: '/api/v1/webhooks' });
    await call(tenant, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/webhooks/${webhook.id}`, payload: { name: 'ERP sync' } });
    assert.equal((await call(tenant, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/rotate-secret` })).statusCode, 200);
    assert.equal((await post(`/api/v1/webhooks/${webhook.id}/rotate-secret`, { overlapSeconds: 60 })).statusCode, 200);
    assert.equal((await call(tenant, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/ping` })).statusCode, 202);

    // A work order through its lifecycle, to its proof.
    const record = json(await post('/api/v1/records', recordBody(category.id, { assetId: asset.id })));
    await call(tenant, { method: 'GET', url: '/api/v1/records?status=OPEN' });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}` });
    await call(tenant, { method: 'PATCH', url: `/api/v1/records/${record.id}`, payload: { priority: 'HIGH' } });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/history` });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/history?limit=1&offset=1` });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/events` });
    await call(tenant, { method: 'GET', url: '/api/v1/records/rec_missing/events' });
    const current = await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}` });
    assert.equal((await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}`, headers: { 'if-none-match': String(current.headers.etag) } })).statusCode, 304);

    // Comments and attachments of the work order.
    await post(`/api/v1/records/${record.id}/comments`, { body: 'On my way' });
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/comments` });
    const upload = (bytes: Buffer, mediaType: string, headers: Record<string, string> = {}) =>
      call(tenant, { method: 'POST', url: `/api/v1/records/${record.id}/attachments?filename=after.jpg`, payload: bytes, headers: { 'content-type': mediaType, ...headers } });
    const jpeg = sampleFiles.jpeg();
    const uploadKey = randomUUID();
    const photo = json(await upload(jpeg, 'image/jpeg', { 'idempotency-key': uploadKey }));
    assert.equal((await upload(jpeg, 'image/jpeg', { 'idempotency-key': uploadKey })).headers['x-idempotent-replay'], 'true');
    assert.equal((await upload(jpeg, 'image/png')).statusCode, 415);
    const attachmentUrl = `/api/v1/records/${record.id}/attachments/${photo.id}`;
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/attachments` });
    await call(tenant, { method: 'GET', url: attachmentUrl });
    await call(tenant, { method: 'GET', url: `${attachmentUrl}/content` });
    assert.equal((await call(tenant, { method: 'GET', url: `${attachmentUrl}/content`, headers: { range: 'bytes=0-99' } })).statusCode, 206);
    assert.equal((await call(tenant, { method: 'GET', url: `${attachmentUrl}/content`, headers: { range: 'bytes=999999-' } })).statusCode, 416);
    assert.equal((await call(tenant, { method: 'GET', url: `${attachmentUrl}/content`, headers: { 'if-none-match': `"${photo.sha256}"` } })).statusCode, 304);
    const head = await call(tenant, { method: 'HEAD', url: `${attachmentUrl}/content` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(photo.size));
    assert.equal(head.body, '');
    const spareFile = json(await upload(sampleFiles.jpeg(), 'image/jpeg'));
    assert.equal((await call(tenant, { method: 'DELETE', url: `/api/v1/records/${record.id}/attachments/${spareFile.id}` })).statusCode, 204);
    const actionKey = randomUUID();
    await post(`/api/v1/records/${record.id}/assign`, { assignee: 'Technician 3' }, { 'idempotency-key': actionKey });
    await post(`/api/v1/records/${record.id}/assign`, { assignee: 'Technician 3' }, { 'idempotency-key': actionKey });
    assert.equal((await post(`/api/v1/records/${record.id}/close`, {})).statusCode, 409);
    // Actions whose body is absent or optional in the document really take no body and no Content-Type.
    const bare = (url: string) => call(tenant, { method: 'POST', url });
    for (const action of ['start', 'hold', 'resume']) assert.equal((await bare(`/api/v1/records/${record.id}/${action}`)).statusCode, 200);
    await post(`/api/v1/records/${record.id}/complete`, { resolutionNotes: 'Replaced the washer.', evidence: [{ attachmentId: photo.id }] });
    assert.equal((await call(tenant, { method: 'DELETE', url: attachmentUrl })).statusCode, 409);
    await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/proof` });
    await waitFor(async () => (await call(tenant, { method: 'GET', url: `/api/v1/records/${record.id}/proof` })).statusCode === 200, 10_000, 'the sealed proof');
    const announced = await waitFor(() => hook.received.find((r) => r.headers['x-webhook-event'] === 'record.proof_delivered'), 10_000, 'record.proof_delivered');
    const proofPath = `/api/v1/proofs/${(JSON.parse(announced.body) as { payload: { proofId: string } }).payload.proofId}`;
    await call(tenant, { method: 'GET', url: proofPath });
    await call(tenant, { method: 'GET', url: '/api/v1/proofs/prf_missing' });
    assert.equal((await bare(`/api/v1/records/${record.id}/reopen`)).statusCode, 200);
    assert.equal((await post(`/api/v1/records/${record.id}/complete`, { resolutionNotes: 'Replaced the tap.' })).statusCode, 200);
    assert.equal((await bare(`/api/v1/records/${record.id}/close`)).statusCode, 200);
    const duplicate = json(await post('/api/v1/records', recordBody(category.id)));
    assert.equal((await bare(`/api/v1/records/${duplicate.id}/cancel`)).statusCode, 200);
    assert.equal((await bare(`/api/v1/assets/${asset.id}/retire`)).statusCode, 200);
    await call(tenant, { method: 'DELETE', url: `/api/v1/assets/${asset.id}` });
    await call(tenant, { method: 'DELETE', url: `/api/v1/locations/${room.id}` });

    // The event feed.
    // One record.created per work order the tour made (one from an approved request, one a checklist's follow-up).
    const workOrders = (await call(tenant, { method: 'GET', url: '/api/v1/records?limit=1' })).json().total as number;
    assert.ok(workOrders >= 5);
    await waitFor(async () => (await call(tenant, { method: 'GET', url: '/api/v1/events?type=record.created&wait=5' })).json().total === workOrders, 10_000, 'every work order in the feed');
    await call(tenant, { method: 'GET', url: '/api/v1/events?type=record.exploded' });
    await call(reader, { method: 'GET', url: '/api/v1/events' });

    // The public transparency log.
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/checkpoint' });
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/checkpoint?treeSize=999999' });
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/verifier-key' });
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/inclusion?leafIndex=0&treeSize=1' });
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/inclusion?leafIndex=x' });
    await call(undefined, { method: 'GET', url: '/api/v1/transparency/consistency?first=1&second=1' });

    // The delivery log, redelivery, and deleting the subscription.
    const delivery = await waitFor(async () => {
      const list = (await call(tenant, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries?status=succeeded` })).json() as { deliveries: { id: string }[] };
      return list.deliveries[0];
    }, 10_000, 'a succeeded delivery');
    await call(tenant, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}` });
    assert.equal((await call(tenant, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver` })).statusCode, 202);
    await call(tenant, { method: 'DELETE', url: `/api/v1/webhooks/${webhook.id}` });

    // Every operation of the document was called, and every answer is documented.
    const operationIds = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId!));
    assert.deepEqual(operationIds.filter((id) => !checker.calledOperations.has(id)), [], 'operations the tour does not call');
    assert.deepEqual([...new Set(checker.problems)], []);
  });

  it('every operation has its stable camelCase operationId', () => {
    const operationIds = Object.fromEntries(
      Object.entries(document.paths).flatMap(([template, item]) =>
        Object.entries(item).map(([method, operation]) => [`${method.toUpperCase()} ${template}`, operation.operationId]),
      ),
    );
    assert.deepEqual(operationIds, OPERATION_IDS);
  });

  it('names every JSON request and response body as a component schema', () => {
    const unnamed: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const bodies = [
          ['request', operation.requestBody?.content ?? {}],
          ...Object.entries(operation.responses).map(([status, answer]) => [status, answer.content ?? {}]),
        ] as [string, Record<string, { schema?: { $ref?: string } }>][];
        for (const [which, content] of bodies) {
          for (const [mediaType, { schema }] of Object.entries(content)) {
            // Raw file bytes (attachments, any text/plain among them) have no structure to name; the log's text answers are named too, though.
            if (JSON_MEDIA_TYPE.test(mediaType) && !schema?.$ref?.startsWith('#/components/schemas/')) {
              unnamed.push(`${method.toUpperCase()} ${template} ${which} ${mediaType}`);
            }
          }
        }
      }
    }
    assert.deepEqual(unnamed, []);
  });

  it('refers every operation to the shared problem answers of components/responses, each of them used', () => {
    const inline: string[] = [];
    const used = new Set<string>();
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, answer] of Object.entries(operation.responses)) {
          if (answer.$ref) used.add(answer.$ref);
          else if (answer.content?.['application/problem+json']) inline.push(`${method.toUpperCase()} ${template} ${status}`);
        }
      }
    }
    // Only the health checks answer problems of their own: without the RateLimit fields, which they are spared.
    assert.deepEqual(inline.sort(), ['GET /healthz 503', 'GET /readyz 503']);
    assert.deepEqual(Object.keys(document.components.responses).map((name) => `#/components/responses/${name}`).filter((ref) => !used.has(ref)), []);
    const createRecord = document.paths['/api/v1/records']!.post!.responses;
    assert.deepEqual(
      Object.fromEntries(Object.entries(createRecord).filter(([status]) => status >= '400')),
      Object.fromEntries(
        Object.entries({ 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 409: 'Conflict', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType', 422: 'UnprocessableEntity', 429: 'RateLimited', 500: 'InternalError', 503: 'Unavailable' }).map(
          ([status, name]) => [status, { $ref: `#/components/responses/${name}` }],
        ),
      ),
    );
  });

  it('documents Problem.code as the enum of the error catalogue', () => {
    assert.deepEqual(document.components.schemas.Problem!.properties!.code!.enum, Object.keys(ERROR_CODES));
  });

  it('leaves out of the required what a client may leave out', () => {
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.name === 'limit' || parameter.name === 'offset') assert.equal(parameter.required, false, `${method} ${template} ${parameter.name}`);
        }
      }
    }
    const action = (name: string) => document.paths[`/api/v1/records/{id}/${name}`]!.post!;
    for (const name of ['start', 'resume', 'close']) assert.equal(action(name).requestBody, undefined, name);
    for (const name of ['hold', 'cancel', 'reopen']) assert.equal(action(name).requestBody?.required, false, name);
    assert.equal(action('assign').requestBody?.required, true);
  });

  it('declares public operations and webhooks with no security requirement', () => {
    for (const path of ['/healthz', '/readyz', '/.well-known/jwks.json', '/api/v1/transparency/checkpoint']) {
      assert.deepEqual(document.paths[path]!.get!.security, [], path);
    }
    for (const [event, item] of Object.entries(document.webhooks)) assert.deepEqual(item.post!.security, [], event);
    assert.deepEqual(document.paths['/api/v1/records']!.get!.security, [{ bearerAuth: ['records:read'] }]);
  });

  it('every operation that documents If-Match refuses a stale one with 412', async () => {
    const tenant = await t.newTenant();
    const create = async (url: string, payload: unknown) => {
      const response = await tenant.request({ method: 'POST', url, payload: payload as never });
      assert.equal(response.statusCode, 201, response.body);
      return (response.json() as { id: string }).id;
    };
    const categoryId = await create('/api/v1/categories', { name: 'Stale' });
    const ids: Record<string, string> = {
      categories: categoryId,
      locations: await create('/api/v1/locations', { name: 'Stale site' }),
      assets: await create('/api/v1/assets', { name: 'Stale boiler', tag: 'S-1' }),
      meters: await create('/api/v1/meters', { name: 'Stale hours', unit: 'h', kind: 'cumulative' }),
      schedules: await create('/api/v1/schedules', { name: 'Stale plan', template: { categoryId, description: 'x' }, triggers: [{ type: 'interval', every: 'P30D' }] }),
      records: await create('/api/v1/records', recordBody(categoryId, { assignee: 'Technician 3' })),
      webhooks: await create('/api/v1/webhooks', { name: 'Stale', url: hook.url, events: ['record.created'] }),
      people: await create('/api/v1/people', { name: 'Stale technician' }),
      teams: await create('/api/v1/teams', { name: 'Stale team' }),
      vendors: await create('/api/v1/vendors', { name: 'Stale vendor' }),
      parts: await create('/api/v1/parts', { sku: 'STALE-1', name: 'Stale part', unit: 'pcs', unitCost: { amount: '1.00', currency: 'USD' } }),
      'custom-fields': await create('/api/v1/custom-fields', { key: 'stale', label: 'Stale', entity: 'asset', type: 'text' }),
      checklists: await create('/api/v1/checklists', { name: 'Stale', items: [{ key: 'ok', label: 'OK', type: 'checkbox' }] }),
      requests: await create('/api/v1/requests', { description: 'Stale request', requesterName: 'Ann', categoryId }),
      'intake-links': await create('/api/v1/intake-links', { name: 'Stale form' }),
    };
    const bodies: Record<string, unknown> = {
      'PATCH categories': { description: 'x' },
      'PATCH locations': { name: 'x' },
      'PATCH assets': { model: 'x' },
      'PATCH meters': { name: 'x' },
      'PATCH schedules': { name: 'x' },
      'PATCH records': { priority: 'LOW' },
      'PATCH webhooks': { name: 'x' },
      'PATCH people': { name: 'x' },
      'PATCH teams': { name: 'x' },
      'PATCH vendors': { name: 'x' },
      'PATCH parts': { name: 'x' },
      'PATCH custom-fields': { label: 'x' },
      'PATCH checklists': { name: 'x' },
      'PATCH intake-links': { name: 'x' },
      checklists: { checklistId: ids.checklists },
      assign: { assignee: 'Technician 4' },
      hold: { reason: 'Parts' },
      complete: { resolutionNotes: 'Done' },
      cancel: { reason: 'Duplicate' },
      reopen: { reason: 'Again' },
      reject: { reason: 'Stale' },
    };
    const checked: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.parameters?.some((p) => p.in === 'header' && p.name === 'if-match')) continue;
        const collection = /^\/api\/v1\/([a-z-]+)\/\{id\}/.exec(template)?.[1];
        assert.ok(collection && ids[collection], `${method} ${template}: no resource to try it on`);
        const url = template.replace('{id}', ids[collection]!);
        const action = /\/\{id\}\/([a-z-]+)$/.exec(template)?.[1];
        // A request's cancel and a link's rotation take no body (a work order's cancel takes a reason).
        const body = method === 'delete' || ['requests/cancel', 'intake-links/rotate'].includes(`${collection}/${action}`) ? undefined : (bodies[action ?? `PATCH ${collection}`] ?? {});
        const response = await tenant.request({ method: method.toUpperCase() as 'POST', url, headers: { 'if-match': '"999"' }, ...(body === undefined ? {} : { payload: body as never }) });
        assert.equal(response.statusCode, 412, `${method.toUpperCase()} ${template}: ${response.body}`);
        checked.push(`${method.toUpperCase()} ${template}`);
      }
    }
    assert.ok(checked.length >= 15, checked.join(', '));
  });
});

describe('the OpenAPI document describes the answers of a rate-limited service', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp('sqlite', { env: { WO_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  after(async () => t.close());

  it('documents the 429 answers, with Retry-After and the RateLimit fields, of keyed and public operations', async () => {
    const checker = new ContractChecker((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
    const tenant = await t.newTenant();
    const limited = async (send: () => Promise<LightMyRequestResponse>, method: string, url: string) =>
      waitFor(async () => {
        const response = await send();
        checker.check(method, url, response);
        return response.statusCode === 429 ? response : undefined;
      }, 10_000, `a 429 from ${method} ${url}`);
    const keyed = await limited(() => tenant.request({ method: 'GET', url: '/api/v1/categories' }), 'GET', '/api/v1/categories');
    assert.ok(keyed.headers['retry-after']);
    const anonymous = await limited(() => t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }), 'GET', '/.well-known/jwks.json');
    assert.equal(anonymous.json().code, 'rate_limited');
    assert.deepEqual(checker.problems, []);
  });
});
