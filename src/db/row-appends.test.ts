import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Database } from './database.js';
import { RowAppends } from './row-appends.js';
import { TEST_DIALECTS, openEmptyDatabase } from '../../test/helpers/databases.js';

// On a plain database of each kind: two tables, rows appended to both in one step.
for (const dialect of TEST_DIALECTS) {
  describe(`RowAppends (${dialect})`, () => {
    let database: Database;
    let close: () => Promise<void>;
    before(async () => {
      ({ database, close } = await openEmptyDatabase(dialect));
      await sql`CREATE TABLE records (id text PRIMARY KEY, note text)`.execute(database.db);
      await sql`CREATE TABLE record_events (id text PRIMARY KEY, record_id text NOT NULL REFERENCES records (id), data text)`.execute(database.db);
    });
    after(async () => {
      await close?.();
    });

    const tables = (db: Database['db']) => db as never as Parameters<RowAppends['write']>[0];

    it('writes every row of every table, in one transaction with the rest of its work', async () => {
      await database.db.transaction().execute(async (tx) => {
        const appends = new RowAppends()
          .add('records' as never, { id: 'r1', note: 'first "quoted" note' } as never)
          .add('record_events' as never, { id: 'e1', record_id: 'r1', data: '{}' } as never, { id: 'e2', record_id: 'r1', data: null } as never);
        await appends.write(tables(tx as never));
      });
      const events = await sql<{ id: string; data: string | null }>`SELECT id, data FROM record_events ORDER BY id`.execute(database.db);
      assert.deepEqual(events.rows, [{ id: 'e1', data: '{}' }, { id: 'e2', data: null }]);
      const records = await sql<{ note: string }>`SELECT note FROM records`.execute(database.db);
      assert.deepEqual(records.rows, [{ note: 'first "quoted" note' }]);
    });

    it('writes none of them when one row fails, and the transaction with it', async () => {
      await assert.rejects(
        database.db.transaction().execute(async (tx) => {
          await new RowAppends()
            .add('records' as never, { id: 'r2', note: 'kept only if all are' } as never)
            .add('record_events' as never, { id: 'e3', record_id: 'no such record', data: '{}' } as never)
            .write(tables(tx as never));
        }),
      );
      const records = await sql<{ id: string }>`SELECT id FROM records WHERE id = 'r2'`.execute(database.db);
      assert.equal(records.rows.length, 0);
    });
  });
}

if (TEST_DIALECTS.includes('postgres')) {
  describe('RowAppends.writeIf (postgres)', () => {
    let database: Database;
    let close: () => Promise<void>;
    before(async () => {
      ({ database, close } = await openEmptyDatabase('postgres'));
      await sql`CREATE TABLE categories (id text PRIMARY KEY, org_id text NOT NULL, name text, description text, created_at text, updated_at text, version integer NOT NULL DEFAULT 1)`.execute(database.db);
      await sql`CREATE TABLE records (id text PRIMARY KEY, org_id text NOT NULL DEFAULT 'o1', category_id text NOT NULL REFERENCES categories (id), version integer NOT NULL)`.execute(database.db);
      await sql`CREATE TABLE outbox_events (seq bigserial PRIMARY KEY, id text NOT NULL)`.execute(database.db);
      await sql`CREATE TABLE idempotency_keys (org_id text, key text, response_status integer, PRIMARY KEY (org_id, key))`.execute(database.db);
      await sql`INSERT INTO categories (id, org_id) VALUES ('c1', 'o1')`.execute(database.db);
    });
    after(async () => {
      await close?.();
    });

    const db = () => database.oneStatementWrites!;
    const appendsFor = (id: string) =>
      new RowAppends()
        .add('records' as never, { id, category_id: 'c1', version: 1 } as never)
        .add('outbox_events' as never, { id: `${id}-created` } as never, { id: `${id}-assigned` } as never, { id: `${id}-third` } as never);
    const claim = (key: string) => ({ table: 'idempotency_keys' as never, row: { org_id: 'o1', key, response_status: 201 } });
    const count = async (table: string, where: string) =>
      Number((await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.id(table)} WHERE ${sql.raw(where)}`.execute(database.db)).rows[0]!.n);

    it('writes every row, in the order added within a table, when the references exist and the claim is new', async () => {
      const outcome = await appendsFor('r1').writeIf(db(), { existing: [{ table: 'categories' as never, id: 'c1', orgId: 'o1', lockForShare: true }], claim: claim('k1') });
      assert.equal(outcome, 'written');
      const events = await sql<{ id: string }>`SELECT id FROM outbox_events WHERE id LIKE 'r1-%' ORDER BY seq`.execute(database.db);
      assert.deepEqual(events.rows.map((row) => row.id), ['r1-created', 'r1-assigned', 'r1-third']);
      assert.equal(await count('idempotency_keys', "key = 'k1'"), 1);
    });

    it('writes nothing, the claim included, when a reference is missing or belongs to another organization', async () => {
      for (const reference of [{ id: 'nope', orgId: 'o1' }, { id: 'c1', orgId: 'o2' }]) {
        const outcome = await appendsFor('r2').writeIf(db(), { existing: [{ table: 'categories' as never, ...reference }], claim: claim('k2') });
        assert.equal(outcome, 'missing');
      }
      assert.equal(await count('records', "id = 'r2'"), 0);
      assert.equal(await count('outbox_events', "id LIKE 'r2-%'"), 0);
      assert.equal(await count('idempotency_keys', "key = 'k2'"), 0);
    });

    it('writes nothing when another request holds the claim', async () => {
      assert.equal(await appendsFor('r3').writeIf(db(), { claim: claim('k3') }), 'written');
      assert.equal(await appendsFor('r4').writeIf(db(), { claim: claim('k3') }), 'claim_taken');
      assert.equal(await count('records', "id = 'r4'"), 0);
      assert.equal(await count('outbox_events', "id LIKE 'r4-%'"), 0);
    });

    it('changes a row only at the version read, and writes nothing with a stale one', async () => {
      await appendsFor('r6').writeIf(db(), {});
      const update = (version: number) => ({ table: 'records' as never, id: 'r6', orgId: 'o1', version, set: { version: version + 1 } });
      assert.equal(await new RowAppends().add('outbox_events' as never, { id: 'r6-changed' } as never).writeIf(db(), { update: update(1) }), 'written');
      assert.equal(await new RowAppends().add('outbox_events' as never, { id: 'r6-stale' } as never).writeIf(db(), { update: update(1), claim: claim('k6') }), 'stale');
      assert.equal(await count('records', "id = 'r6' AND version = 2"), 1);
      assert.equal(await count('outbox_events', "id = 'r6-stale'"), 0);
      assert.equal(await count('idempotency_keys', "key = 'k6'"), 0);
    });

    it('answers the row as it stood when its version had moved on, and nothing when it wrote or the row is not there', async () => {
      const update = (version: number, orgId = 'o1') => ({ table: 'categories' as never, id: 'c1', orgId, version, set: { name: `v${version + 1}`, version: version + 1 } });
      const written = await new RowAppends().add('outbox_events' as never, { id: 'c1-renamed' } as never).writeIfAtVersion(db(), { update: update(1) });
      assert.deepEqual(written, { outcome: 'written' });

      const stale = await new RowAppends().add('outbox_events' as never, { id: 'c1-stale' } as never).writeIfAtVersion(db(), { update: update(1) });
      assert.equal(stale.outcome, 'stale');
      assert.deepEqual(stale.current, { id: 'c1', org_id: 'o1', name: 'v2', description: null, created_at: null, updated_at: null, version: 2 });
      assert.equal(await count('outbox_events', "id = 'c1-stale'"), 0);

      assert.deepEqual(await new RowAppends().writeIfAtVersion(db(), { update: update(2, 'o2') }), { outcome: 'stale' }, 'another organization’s row is neither changed nor answered');
      assert.deepEqual(await new RowAppends().writeIfAtVersion(db(), { update: { ...update(2), id: 'gone' } }), { outcome: 'stale' });
      assert.equal(await count('categories', "id = 'c1' AND version = 2"), 1);
    });

    it('keeps statements of different shapes apart however they alternate (their texts are built once per shape)', async () => {
      const events = (id: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${id}-e${i}` }) as never);
      const cases = [
        { id: 's1', events: 1, lockForShare: true },
        { id: 's2', events: 3, lockForShare: false },
        { id: 's3', events: 1, lockForShare: false },
        { id: 's4', events: 3, lockForShare: true },
        { id: 's5', events: 1, lockForShare: true },
        { id: 's6', events: 2, lockForShare: false },
      ];
      for (const c of cases) {
        const appends = new RowAppends().add('records' as never, { id: c.id, category_id: 'c1', version: 1 } as never).add('outbox_events' as never, ...events(c.id, c.events));
        const outcome = await appends.writeIf(db(), { existing: [{ table: 'categories' as never, id: 'c1', orgId: 'o1', lockForShare: c.lockForShare }], claim: claim(`shape-${c.id}`) });
        assert.equal(outcome, 'written', c.id);
      }
      for (const c of cases) {
        const written = await sql<{ id: string }>`SELECT id FROM outbox_events WHERE id LIKE ${`${c.id}-%`} ORDER BY seq`.execute(database.db);
        assert.deepEqual(written.rows.map((row) => row.id), Array.from({ length: c.events }, (_, i) => `${c.id}-e${i}`), c.id);
      }
    });

    it('takes a decrement only with enough left, with the rows, the row’s update and the claim; otherwise writes nothing', async () => {
      await sql`CREATE TABLE stock (item text PRIMARY KEY, on_hand bigint NOT NULL, below integer NOT NULL, updated_at text)`.execute(database.db);
      await sql`INSERT INTO stock VALUES ('i1', 3, 0, NULL)`.execute(database.db);
      await appendsFor('d0').writeIf(db(), {});
      let version = 1;
      const take = (id: string, amount: number, threshold: number | null = null) =>
        new RowAppends().add('outbox_events' as never, { id } as never).writeIf(db(), {
          update: { table: 'records' as never, id: 'd0', orgId: 'o1', version, set: { version: version + 1 }, lockFirst: true },
          decrement: { table: 'stock' as never, where: { item: 'i1' }, column: 'on_hand', amount, set: { updated_at: id }, flagBelow: { column: 'below', threshold } },
          claim: claim(`decrement-${id}`),
        });
      const stock = async () => (await sql<{ on_hand: number; updated_at: string | null }>`SELECT on_hand, updated_at FROM stock WHERE item = 'i1'`.execute(database.db)).rows[0];

      assert.equal(await take('take-2', 2), 'written');
      version++;
      assert.deepEqual(await stock(), { on_hand: 1, updated_at: 'take-2' });
      assert.equal(await take('take-2-more', 2), 'missing', 'more than is left');
      assert.equal(await take('cross', 1, 1), 'missing', 'what is left would cross the threshold: the flag would have to change');
      const stale = await new RowAppends().add('outbox_events' as never, { id: 'stale' } as never).writeIf(db(), {
        update: { table: 'records' as never, id: 'd0', orgId: 'o1', version: version - 1, set: { version }, lockFirst: true },
        decrement: { table: 'stock' as never, where: { item: 'i1' }, column: 'on_hand', amount: 1 },
      });
      assert.equal(stale, 'missing', 'the row locked first is at another version');
      assert.deepEqual(await stock(), { on_hand: 1, updated_at: 'take-2' });
      for (const id of ['take-2-more', 'cross', 'stale']) assert.equal(await count('outbox_events', `id = '${id}'`), 0, id);
      assert.equal(await count('idempotency_keys', "key LIKE 'decrement-%'"), 1);
      assert.equal(await count('records', `id = 'd0' AND version = ${version}`), 1);

      assert.equal(await take('last', 1, 0), 'written', 'down to zero, not below a threshold of 0');
      assert.deepEqual(await stock(), { on_hand: 0, updated_at: 'last' });
    });

    it('checks a reference at the version read', async () => {
      const at = (version: number) => appendsFor(`v${version}`).writeIf(db(), { existing: [{ table: 'categories' as never, id: 'c1', orgId: 'o1', lockForShare: true, version }] });
      const current = Number((await sql<{ version: number }>`SELECT version FROM categories WHERE id = 'c1'`.execute(database.db)).rows[0]!.version);
      assert.equal(await at(current + 1), 'missing');
      assert.equal(await at(current), 'written');
    });

    it('writes without a claim when none is asked for', async () => {
      assert.equal(await appendsFor('r5').writeIf(db(), {}), 'written');
      assert.equal(await count('records', "id = 'r5'"), 1);
    });
  });
}

