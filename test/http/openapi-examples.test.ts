import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { itOnEachDatabase, startTestApp, type TestApp, type Tenant } from '../helpers/test-app.js';
import { sampleFiles } from '../helpers/files.js';
import { EXAMPLE_IDS } from '../../src/http/openapi-examples.js';
import { verifyBundle } from '../../src/proofs/verify.js';

interface Example {
  summary?: string;
  description?: string;
  value: unknown;
}
interface Media {
  schema?: object;
  examples?: Record<string, Example>;
}
interface Answer {
  $ref?: string;
  content?: Record<string, Media>;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Answer>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, Answer> };
}

/** Media types whose bodies are JSON (or a JSON string: the log's text answers), with a schema to hold examples to. */
const JSON_MEDIA_TYPE = /^application\/(?:[a-z.+-]+\+)?json$/;

/** Every body of the document that has a schema: `where` names it in failures. */
function bodiesOf(document: Document): { where: string; media: Media; mediaType: string }[] {
  const bodies: { where: string; media: Media; mediaType: string }[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${template}`;
      for (const [mediaType, media] of Object.entries(operation.requestBody?.content ?? {})) bodies.push({ where: `${where} request ${mediaType}`, media, mediaType });
      for (const [status, answer] of Object.entries(operation.responses)) {
        for (const [mediaType, media] of Object.entries(answer.content ?? {})) bodies.push({ where: `${where} ${status} ${mediaType}`, media, mediaType });
      }
    }
  }
  for (const [name, answer] of Object.entries(document.components.responses)) {
    for (const [mediaType, media] of Object.entries(answer.content ?? {})) bodies.push({ where: `components/responses/${name} ${mediaType}`, media, mediaType });
  }
  return bodies.filter(({ media }) => media.schema && Object.keys(media.schema).length > 0);
}

describe('the examples of the OpenAPI document', () => {
  let t: TestApp;
  let document: Document;

  before(async () => {
    t = await startTestApp('sqlite');
    document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  });
  after(async () => t.close());

  it('give every request and response body with a schema named examples, each with a summary', () => {
    const bodies = bodiesOf(document);
    assert.ok(bodies.length > 100, `only ${bodies.length} bodies`);
    const without = bodies.filter(({ media }) => Object.keys(media.examples ?? {}).length === 0).map(({ where }) => where);
    assert.deepEqual(without, [], 'bodies without examples');
    const unnamed = bodies.flatMap(({ where, media }) => Object.entries(media.examples!).filter(([, example]) => !example.summary).map(([name]) => `${where} ${name}`));
    assert.deepEqual(unnamed, [], 'examples without a summary');
  });

  it('are each valid against the schema of the body they are shown for', () => {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'https://wo.test/openapi.json', components: document.components });
    const invalid: string[] = [];
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    for (const { where, media, mediaType } of bodiesOf(document)) {
      const text = JSON.stringify(media.schema).replaceAll('"#/components/', '"https://wo.test/openapi.json#/components/');
      let validate = validators.get(text);
      if (!validate) validators.set(text, (validate = ajv.compile(JSON.parse(text) as object)));
      for (const [name, example] of Object.entries(media.examples ?? {})) {
        if (!JSON_MEDIA_TYPE.test(mediaType) && typeof example.value !== 'string') invalid.push(`${where} ${name}: a ${mediaType} body is text`);
        else if (!validate(example.value)) invalid.push(`${where} ${name}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    assert.deepEqual(invalid, []);
  });

  it('include a proof bundle that verifies against the key set example, as a client would check it', async () => {
    const example = (schema: string) => {
      for (const { media } of bodiesOf(document)) if ((media.schema as { $ref?: string }).$ref === `#/components/schemas/${schema}`) return Object.values(media.examples!)[0]!.value;
      throw new Error(`no example of ${schema}`);
    };
    const result = await verifyBundle(example('ProofBundle'), example('Jwks'));
    assert.equal(result.valid, true, JSON.stringify(result));
  });

  it('show each problem answer one example per code, linked to its section of the page of error codes', () => {
    const notFound = document.components.responses.NotFound!.content!['application/problem+json']!.examples!;
    assert.deepEqual(Object.keys(notFound), ['not_found', 'route_not_found']);
    assert.equal((notFound.not_found!.value as { documentationUrl: string }).documentationUrl, `${t.config.publicUrl}/docs/errors#not_found`);
  });
});

/**
 * A newcomer's first session, from the API reference alone: each request example sent as it is,
 * in the order the examples build on each other. Where an example names another resource (its
 * description says which answer its id comes from), the id that answer gave is used instead.
 */
describe('the request examples of the OpenAPI document', () => {
  itOnEachDatabase('succeed when sent as they are, each create’s id standing in for the example’s', async (t) => {
    const document: Document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const tenant = await t.newTenant();
    const scenario = new Scenario(document, tenant);

    await scenario.send('createCategory', {}, { plumbing: EXAMPLE_IDS.category });
    await scenario.send('updateCategory', { id: EXAMPLE_IDS.category });
    await scenario.send('createCustomField', {}, { boilerType: EXAMPLE_IDS.customField });
    await scenario.send('updateCustomField', { id: EXAMPLE_IDS.customField });
    await scenario.send('createLocation', {}, { site: EXAMPLE_IDS.site, building: EXAMPLE_IDS.building });
    await scenario.send('updateLocation', { id: EXAMPLE_IDS.building });
    await scenario.send('createAsset', {}, { boiler: EXAMPLE_IDS.boiler });
    await scenario.send('createMeter', {}, { runHours: EXAMPLE_IDS.runHours });
    await scenario.send('updateMeter', { id: EXAMPLE_IDS.runHours });
    await scenario.send('postMeterReadings', { id: EXAMPLE_IDS.runHours });
    await scenario.send('previewSchedule', {});
    await scenario.send('createSchedule', {}, { annualService: EXAMPLE_IDS.schedule });
    await scenario.send('updateSchedule', { id: EXAMPLE_IDS.schedule });
    await scenario.send('createVendor', {}, { harbourPlumbing: EXAMPLE_IDS.vendor });
    await scenario.send('updateVendor', { id: EXAMPLE_IDS.vendor });
    await scenario.send('createPerson', {}, { samOkafor: EXAMPLE_IDS.person });
    await scenario.send('updatePerson', { id: EXAMPLE_IDS.person });
    await scenario.send('createTeam', {}, { plumbingCrew: EXAMPLE_IDS.team });
    await scenario.send('updateTeam', { id: EXAMPLE_IDS.team });
    await scenario.send('createRecord', {}, { kitchenTap: EXAMPLE_IDS.record, noHotWater: EXAMPLE_IDS.secondRecord });
    const record = { id: EXAMPLE_IDS.record };
    await scenario.send('updateRecord', record);
    await scenario.send('createRecordComment', record);
    await scenario.send('createPart', {}, { cartridge: EXAMPLE_IDS.part });
    await scenario.send('updatePart', { id: EXAMPLE_IDS.part });
    await scenario.send('createStockMovement', { id: EXAMPLE_IDS.part });
    await scenario.send('createRecordLabor', record);
    await scenario.send('createRecordPart', record, { cartridge: EXAMPLE_IDS.partLine });
    await scenario.send('createRecordCost', record);
    await scenario.send('postCostLine', { id: EXAMPLE_IDS.partLine });
    await scenario.upload(record.id, EXAMPLE_IDS.attachment);
    // A checklist on the second work order: the signature is a photo attached to it.
    const second = { id: EXAMPLE_IDS.secondRecord };
    await scenario.send('createChecklist', {}, { boiler: EXAMPLE_IDS.checklist });
    await scenario.send('updateChecklist', { id: EXAMPLE_IDS.checklist });
    await scenario.send('attachRecordChecklist', second);
    await scenario.upload(second.id, EXAMPLE_IDS.signature);
    await scenario.send('answerChecklistItem', { ...second, checklistId: EXAMPLE_IDS.checklist, key: 'pressure' }, {}, ['number']);
    await scenario.send('answerChecklistItem', { ...second, checklistId: EXAMPLE_IDS.checklist, key: 'signed_off' }, {}, ['signature']);
    // Through the lifecycle: every action with a body sends its example.
    await scenario.send('assignRecord', record);
    await scenario.send('createRecordAccessLink', record, { forVendor: EXAMPLE_IDS.accessLink });
    await scenario.sendBare('startRecord', record);
    await scenario.send('holdRecord', record);
    await scenario.sendBare('resumeRecord', record);
    await scenario.send('completeRecord', record, {}, ['withPhoto']);
    await scenario.send('reopenRecord', record);
    await scenario.send('completeRecord', record, {}, ['withJobSheet']);
    await scenario.sendBare('closeRecord', record);
    await scenario.send('cancelRecord', { id: EXAMPLE_IDS.secondRecord });
    await scenario.send('createWebhook', {}, { erpSync: EXAMPLE_IDS.webhook });
    await scenario.send('updateWebhook', { id: EXAMPLE_IDS.webhook });
    await scenario.send('rotateWebhookSecret', { id: EXAMPLE_IDS.webhook });
    await scenario.send('updateAsset', { id: EXAMPLE_IDS.boiler });
    // Work requests: one approved into a work order, another rejected.
    await scenario.send('createWorkRequest', {}, { leak: EXAMPLE_IDS.workRequest });
    await scenario.send('approveWorkRequest', { id: EXAMPLE_IDS.workRequest });
    await scenario.send('createWorkRequest', {}, { leak: 'wrq_rejected' });
    await scenario.send('rejectWorkRequest', { id: 'wrq_rejected' });
    await scenario.send('createIntakeLink', {}, { frontDoor: EXAMPLE_IDS.intakeLink });
    await scenario.send('updateIntakeLink', { id: EXAMPLE_IDS.intakeLink });

    assert.deepEqual(scenario.unsent(), [], 'request examples the scenario does not send');
  });
});

/** Sends the document's request examples, with ids the service answered in place of the examples' own. */
class Scenario {
  private readonly ids = new Map<string, string>();
  private readonly sent = new Set<string>();

  constructor(
    private readonly document: Document,
    private readonly tenant: Tenant,
  ) {}

  /**
   * Sends each example of `operationId` (or those named in `only`) with `path` filled in; `creates`
   * says which example id each example's answer stands for from now on.
   */
  async send(operationId: string, path: Record<string, string>, creates: Record<string, string> = {}, only?: string[]): Promise<LightMyRequestResponse[]> {
    const { method, url, operation } = this.operation(operationId, path);
    const examples = operation.requestBody?.content['application/json']?.examples ?? {};
    assert.ok(Object.keys(examples).length > 0, `${operationId} has no request example`);
    const answers: LightMyRequestResponse[] = [];
    for (const [name, example] of Object.entries(examples)) {
      if (only && !only.includes(name)) continue;
      const response = await this.tenant.request({ method: method as 'POST', url, payload: this.substitute(example.value) as object });
      assert.ok(response.statusCode >= 200 && response.statusCode < 300, `${operationId} example "${name}": ${response.statusCode} ${response.body}`);
      this.sent.add(`${operationId} ${name}`);
      if (creates[name]) this.ids.set(creates[name], (response.json() as { id: string }).id);
      answers.push(response);
    }
    return answers;
  }

  /** An operation that takes no body. */
  async sendBare(operationId: string, path: Record<string, string>): Promise<void> {
    const { method, url } = this.operation(operationId, path);
    const response = await this.tenant.request({ method: method as 'POST', url });
    assert.ok(response.statusCode >= 200 && response.statusCode < 300, `${operationId}: ${response.statusCode} ${response.body}`);
  }

  /** Attaches a photo to a work order: the upload's body is the file itself, no example. */
  async upload(recordId: string, stands: string): Promise<void> {
    const response = await this.tenant.request({
      method: 'POST',
      url: `/api/v1/records/${this.ids.get(recordId)}/attachments?filename=tap-after.jpg`,
      payload: sampleFiles.jpeg(),
      headers: { 'content-type': 'image/jpeg' },
    });
    assert.equal(response.statusCode, 201, response.body);
    this.ids.set(stands, (response.json() as { id: string }).id);
  }

  /** Every request example of the document that was not sent. */
  unsent(): string[] {
    return Object.values(this.document.paths)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => Object.keys(operation.requestBody?.content['application/json']?.examples ?? {}).map((name) => `${operation.operationId} ${name}`))
      .filter((entry) => !this.sent.has(entry));
  }

  private operation(operationId: string, path: Record<string, string>): { method: string; url: string; operation: Operation } {
    for (const [template, item] of Object.entries(this.document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId !== operationId) continue;
        const url = template.replace(/\{([^}]+)\}/g, (_match, name: string) => this.substitute(path[name]) as string);
        return { method: method.toUpperCase(), url, operation };
      }
    }
    throw new Error(`no operation ${operationId}`);
  }

  /** `value` with every example id that stands for a created resource replaced by that resource's id. */
  private substitute(value: unknown): unknown {
    if (typeof value === 'string') return this.ids.get(value) ?? value;
    if (Array.isArray(value)) return value.map((item) => this.substitute(item));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.substitute(item)]));
    return value;
  }
}
