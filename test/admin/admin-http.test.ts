import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { TestClock, startTestApp, type TestApp } from '../helpers/test-app.js';
import { announceAdminSetupLink } from '../../src/admin/setup-link.js';
import { MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_IP, SESSION_IDLE_MS, SESSION_MAX_AGE_MS, SIGN_IN_WINDOW_MS } from '../../src/admin/service.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, AdminBrowser, createAdmin, csrfTokenIn, formBody } from './admin-client.js';

const SAME_MESSAGE = 'The email or password is not correct.';

function submissionIn(body: string): string {
  return /name="submission" value="([^"]+)"/.exec(body)![1]!;
}

for (const dialect of TEST_DIALECTS) {
  describe(`admin area over HTTP (${dialect})`, () => {
    let t: TestApp;
    const clock = new TestClock();
    before(async () => {
      t = await startTestApp(dialect, { clock });
      await createAdmin(t);
    });
    after(() => t.close());

    it('sends visitors without a session to the sign-in page and refuses their form posts with 401', async () => {
      const visitor = new AdminBrowser(t);
      for (const url of ['/admin', '/admin/organizations', '/admin/audit', '/admin/organizations/org_01ABCDEFGHJKMNPQRSTVWXYZ012/keys']) {
        const response = await visitor.get(url);
        assert.equal(response.statusCode, 303, url);
        assert.equal(response.headers.location, '/admin/login');
      }
      const post = await visitor.post('/admin/organizations', { name: 'Sneaky' });
      assert.equal(post.statusCode, 401);
      assert.match(post.headers['content-type'] as string, /text\/html/);
      assert.equal((await t.context.organizations.list()).some((o) => o.name === 'Sneaky'), false);
      const logout = await visitor.post('/admin/logout', {});
      assert.equal(logout.statusCode, 401);
    });

    it('serves admin pages with CSP, frame, no-sniff, referrer and no-store headers, and only local assets', async () => {
      const page = await new AdminBrowser(t).get('/admin/login');
      const csp = page.headers['content-security-policy'] as string;
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.doesNotMatch(page.body, /https?:\/\//, 'no absolute URLs to other sites');
      assert.doesNotMatch(page.body, /<script>|<style>|\sstyle="|\son[a-z]+="/i, 'no inline script or style');
      const css = await t.app.inject({ method: 'GET', url: '/admin/assets/admin.css' });
      assert.equal(css.statusCode, 200);
      assert.match(css.headers['content-type'] as string, /text\/css/);
      const js = await t.app.inject({ method: 'GET', url: '/admin/assets/copy-key.js' });
      assert.match(js.headers['content-type'] as string, /javascript/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/admin/assets/..%2Fservice.ts' })).statusCode, 404);
    });

    it('signs in with the right password and sets an HttpOnly, SameSite=Strict session cookie scoped to /admin', async () => {
      const browser = new AdminBrowser(t);
      const response = await browser.signIn();
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/admin/organizations');
      const setCookie = [response.headers['set-cookie']].flat().find((c) => c?.startsWith('wo_admin_session='))!;
      assert.match(setCookie, /HttpOnly/);
      assert.match(setCookie, /SameSite=Strict/);
      assert.match(setCookie, /Path=\/admin/);
      assert.doesNotMatch(setCookie, /Secure/, 'plain http public URL: no Secure flag');
      const page = await browser.get('/admin/organizations');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /ops@example\.com/);
      // The session id in the database is the hash of the cookie, never the cookie itself.
      const token = browser.cookies.get('wo_admin_session')!;
      const rows = await t.context.database.db.selectFrom('admin_sessions').select('id').execute();
      assert.equal(rows.some((r) => r.id === token), false);
    });

    it('answers a repeated or malformed query parameter with a 400 page, never a 500', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      for (const url of ['/admin/audit?org=a&org=b', '/admin/audit?offset=1&offset=2', '/admin/organizations?created=a&created=b', '/admin/audit?org=%ff']) {
        const page = await browser.get(url);
        assert.equal(page.statusCode, 400, `${url}: ${page.body.slice(0, 200)}`);
        assert.match(page.headers['content-type'] as string, /^text\/html/);
        assert.match(page.body, /Request not accepted/);
      }
      assert.equal((await browser.get('/admin/audit?offset=0')).statusCode, 200);
      // A form whose percent-escapes spell no UTF-8 (an encoded lone surrogate) is refused, not stored as literal text.
      const token = await browser.csrfToken();
      const form = await browser.postEncoded('/admin/organizations', `_csrf=${encodeURIComponent(token)}&name=%ED%A0%80`);
      assert.equal(form.statusCode, 400, form.body.slice(0, 300));
      assert.match(form.body, /percent-escapes spell no UTF-8/);
      const organizations = await t.context.database.db.selectFrom('organizations').select('name').execute();
      assert.ok(!organizations.some((org) => org.name.includes('%')), JSON.stringify(organizations));
      const fine = await browser.post('/admin/organizations', { _csrf: token, name: 'Ünïcode 100% fine' });
      assert.equal(fine.statusCode, 303, fine.body.slice(0, 300));
    });

    it('answers an unknown email and a wrong password with the same message', async () => {
      const unknown = await new AdminBrowser(t, '198.51.100.1').signIn('nobody@example.com', ADMIN_PASSWORD);
      const wrong = await new AdminBrowser(t, '198.51.100.2').signIn(ADMIN_EMAIL, 'not the password at all');
      assert.equal(unknown.statusCode, 401);
      assert.equal(wrong.statusCode, 401);
      assert.ok(unknown.body.includes(SAME_MESSAGE));
      assert.ok(wrong.body.includes(SAME_MESSAGE));
      assert.equal(unknown.cookies.some((c) => c.name === 'wo_admin_session'), false);
    });

    it('locks sign-in for an email after 5 failures in 15 minutes, even with the right password, until the window passes', async () => {
      const email = 'locked@example.com';
      await createAdmin(t, email);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
        // different addresses: the per-email counter alone must lock
        const failed = await new AdminBrowser(t, `192.0.2.${i + 1}`).signIn(email, `wrong password ${i}`);
        assert.equal(failed.statusCode, 401);
      }
      const locked = await new AdminBrowser(t, '192.0.2.99').signIn(email, ADMIN_PASSWORD);
      assert.equal(locked.statusCode, 429);
      assert.match(locked.body, /Too many failed sign-in attempts/);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      const lockedUnknown = await new AdminBrowser(t, '192.0.2.98').signIn(email.toUpperCase(), ADMIN_PASSWORD);
      assert.equal(lockedUnknown.statusCode, 429, 'the email is compared lowercased');

      clock.advance(SIGN_IN_WINDOW_MS + 1000);
      const after = await new AdminBrowser(t, '192.0.2.99').signIn(email, ADMIN_PASSWORD);
      assert.equal(after.statusCode, 303);
    });

    it('locks sign-in from one address after 20 failures across emails', async () => {
      const ip = '192.0.2.200';
      for (let i = 0; i < MAX_FAILURES_PER_IP; i++) {
        assert.equal((await new AdminBrowser(t, ip).signIn(`guess${i}@example.com`, 'wrong password')).statusCode, 401);
      }
      assert.equal((await new AdminBrowser(t, ip).signIn()).statusCode, 429);
      assert.equal((await new AdminBrowser(t, '192.0.2.201').signIn()).statusCode, 303, 'other addresses are unaffected');
      clock.advance(SIGN_IN_WINDOW_MS + 1000);
    });

    it('refuses a form post without the CSRF token, or with another session’s token, with 403', async () => {
      const alice = new AdminBrowser(t);
      await alice.signIn();
      const bob = new AdminBrowser(t);
      await bob.signIn();
      const missing = await alice.post('/admin/organizations', { name: 'No token' });
      assert.equal(missing.statusCode, 403);
      assert.match(missing.body, /security token/);
      const foreign = await alice.post('/admin/organizations', { name: 'Foreign token', _csrf: await bob.csrfToken() });
      assert.equal(foreign.statusCode, 403);
      assert.equal((await t.context.organizations.list()).some((o) => ['No token', 'Foreign token'].includes(o.name)), false);
      const good = await alice.post('/admin/organizations', { name: 'With token', _csrf: await alice.csrfToken() });
      assert.equal(good.statusCode, 303);
    });

    it('refuses a sign-in post without its pre-session token with 403', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        payload: formBody({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(response.statusCode, 403);
      assert.equal(response.cookies.some((c) => c.name === 'wo_admin_session'), false);
    });

    it('ends a session after 30 idle minutes, and after 12 hours however active', async () => {
      const idle = new AdminBrowser(t);
      await idle.signIn();
      clock.advance(SESSION_IDLE_MS - 60_000);
      assert.equal((await idle.get('/admin/organizations')).statusCode, 200);
      clock.advance(SESSION_IDLE_MS - 60_000);
      assert.equal((await idle.get('/admin/organizations')).statusCode, 200, 'activity keeps it alive');
      clock.advance(SESSION_IDLE_MS + 1);
      assert.equal((await idle.get('/admin/organizations')).statusCode, 303);

      const busy = new AdminBrowser(t);
      await busy.signIn();
      for (let elapsed = 0; elapsed < SESSION_MAX_AGE_MS - 20 * 60_000; elapsed += 20 * 60_000) {
        clock.advance(20 * 60_000);
        assert.equal((await busy.get('/admin/organizations')).statusCode, 200);
      }
      clock.advance(20 * 60_000);
      assert.equal((await busy.get('/admin/organizations')).statusCode, 303);
    });

    it('signing out deletes the session, so the old cookie no longer works', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const token = browser.cookies.get('wo_admin_session')!;
      const out = await browser.post('/admin/logout', { _csrf: await browser.csrfToken() });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, '/admin/login');
      const replay = await t.app.inject({ method: 'GET', url: '/admin/organizations', headers: { cookie: `wo_admin_session=${token}` } });
      assert.equal(replay.statusCode, 303);
    });

    it('creates an organization and escapes its name in every page', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const name = `<script>alert("x")</script> & Co ${dialect}`;
      const created = await browser.post('/admin/organizations', { name, _csrf: await browser.csrfToken() });
      assert.equal(created.statusCode, 303);
      const list = await browser.get(created.headers.location as string);
      assert.ok(!list.body.includes('<script>alert'));
      assert.ok(list.body.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co'));
      const duplicate = await browser.post('/admin/organizations', { name, _csrf: await browser.csrfToken() });
      assert.equal(duplicate.statusCode, 409);
      assert.match(duplicate.body, /already exists/);
      const blank = await browser.post('/admin/organizations', { name: '  ', _csrf: await browser.csrfToken() });
      assert.equal(blank.statusCode, 400);
    });

    it('creates an API key once per submitted form: the same form again shows a warning and creates nothing', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const org = await t.context.organizations.create(`Resubmit ${dialect}`);
      const page = await browser.get(`/admin/organizations/${org.id}/keys`);
      const fields = { _csrf: csrfTokenIn(page.body), submission: submissionIn(page.body), name: 'ERP', scopes: ['records:read'], expiry: 'never' };
      const first = await browser.post(`/admin/organizations/${org.id}/keys`, fields);
      assert.equal(first.statusCode, 201);
      assert.match(first.body, /wo_[0-9A-Za-z]{44}/);
      const again = await browser.post(`/admin/organizations/${org.id}/keys`, fields);
      assert.equal(again.statusCode, 409);
      assert.doesNotMatch(again.body, /wo_[0-9A-Za-z]{44}/);
      assert.match(again.body, /already submitted/);
      assert.equal((await t.context.apiKeys.list(org.id)).length, 1);
    });

    it('validates the key form, keeps the entered values and creates nothing', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const org = await t.context.organizations.create(`Validation ${dialect}`);
      const page = await browser.get(`/admin/organizations/${org.id}/keys`);
      const base = { _csrf: csrfTokenIn(page.body), submission: submissionIn(page.body) };
      const noScopes = await browser.post(`/admin/organizations/${org.id}/keys`, { ...base, name: 'Kept name', expiry: 'never' });
      assert.equal(noScopes.statusCode, 400);
      assert.match(noScopes.body, /Choose at least one scope/);
      assert.match(noScopes.body, /value="Kept name"/);
      const unknownScope = await browser.post(`/admin/organizations/${org.id}/keys`, { ...base, name: 'x', scopes: ['root:everything'] });
      assert.match(unknownScope.body, /Unknown scope/);
      const pastDate = await browser.post(`/admin/organizations/${org.id}/keys`, { ...base, name: 'x', scopes: ['records:read'], expiry: 'date', expiresOn: '2001-01-01' });
      assert.equal(pastDate.statusCode, 400);
      assert.match(pastDate.body, /today or later/);
      const noDate = await browser.post(`/admin/organizations/${org.id}/keys`, { ...base, name: 'x', scopes: ['records:read'], expiry: 'date', expiresOn: '' });
      assert.match(noDate.body, /Choose a date/);
      assert.equal((await t.context.apiKeys.list(org.id)).length, 0);

      const future = new Date(clock.now().getTime() + 40 * 86_400_000).toISOString().slice(0, 10);
      const dated = await browser.post(`/admin/organizations/${org.id}/keys`, { ...base, name: 'Dated', scopes: ['records:read'], expiry: 'date', expiresOn: future });
      assert.equal(dated.statusCode, 201);
      const [key] = await t.context.apiKeys.list(org.id);
      assert.equal(key!.expiresAt, `${future}T23:59:59.999Z`);
      assert.equal(key!.createdBy.startsWith('admin:usr_'), true);
    });

    it('records who created and revoked each key, and shows it on the organization page and in the audit log', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const org = await t.context.organizations.create(`Audited ${dialect}`);
      const page = await browser.get(`/admin/organizations/${org.id}/keys`);
      await browser.post(`/admin/organizations/${org.id}/keys`, {
        _csrf: csrfTokenIn(page.body),
        submission: submissionIn(page.body),
        name: 'Audited key',
        scopes: ['records:read', 'categories:read'],
        expiry: '30d',
      });
      const [key] = await t.context.apiKeys.list(org.id);
      assert.equal(key!.expiresAt, new Date(clock.now().getTime() + 30 * 86_400_000).toISOString());
      const confirm = await browser.get(`/admin/organizations/${org.id}/keys/${key!.id}/revoke`);
      assert.match(confirm.body, /Revoke API key “Audited key”\?/);
      const revoked = await browser.post(`/admin/organizations/${org.id}/keys/${key!.id}/revoke`, { _csrf: csrfTokenIn(confirm.body) });
      assert.equal(revoked.statusCode, 303);
      const after = await browser.get(revoked.headers.location as string);
      assert.match(after.body, /is revoked/);

      const { entries } = await t.context.admin.listAudit(org.id, { limit: 10, offset: 0 });
      assert.deepEqual(entries.map((e) => e.action), ['api_key.revoked', 'api_key.created']);
      for (const entry of entries) {
        assert.equal(entry.actorEmail, ADMIN_EMAIL);
        assert.equal(entry.target, key!.id);
      }
      assert.ok(after.body.includes('api_key.revoked') && after.body.includes('api_key.created'));
      const log = await browser.get('/admin/audit');
      assert.match(log.body, /admin\.signed_in/);
      assert.match(log.body, /api_key\.revoked/);
      const filtered = await browser.get(`/admin/audit?org=${org.id}`);
      assert.doesNotMatch(filtered.body, /admin\.signed_in/);
    });

    it('does not reach the keys of one organization through the address of another', async () => {
      const browser = new AdminBrowser(t);
      await browser.signIn();
      const a = await t.context.organizations.create(`Tenant A ${dialect}`);
      const b = await t.context.organizations.create(`Tenant B ${dialect}`);
      const { apiKey } = await t.context.apiKeys.create({ orgId: a.id, name: 'A only', scopes: ['records:read'], createdBy: 'test' });
      assert.equal((await browser.get(`/admin/organizations/${b.id}/keys/${apiKey.id}/revoke`)).statusCode, 404);
      const csrf = await browser.csrfToken();
      assert.equal((await browser.post(`/admin/organizations/${b.id}/keys/${apiKey.id}/revoke`, { _csrf: csrf })).statusCode, 404);
      assert.equal((await t.context.apiKeys.get(apiKey.id)).state, 'active');
      assert.equal((await browser.get(`/admin/organizations/${encodeURIComponent(a.name)}/keys`)).statusCode, 404, 'ids only, not names');
      assert.equal((await browser.get('/admin/no-such-page')).statusCode, 404);
    });

    it('keeps the JSON API refusing form bodies with 415', async () => {
      const tenant = await t.newTenant(['categories:write']);
      const response = await tenant.request({
        method: 'POST',
        url: '/api/v1/categories',
        payload: 'name=Form',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(response.statusCode, 415);
      assert.equal(response.headers['set-cookie'], undefined);
    });
  });

  describe(`first-run setup link (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t.close());

    it('creates the first administrator once, signs them in, and is dead afterwards', async () => {
      const link = await announceAdminSetupLink(t.context);
      assert.ok(link);
      const url = new URL(link);
      assert.equal(url.pathname, '/admin/setup');
      const token = url.searchParams.get('token')!;
      const stored = await t.context.database.db.selectFrom('admin_setup_tokens').select('token_hash').execute();
      assert.equal(stored.length, 1);
      assert.notEqual(stored[0]!.token_hash, token, 'only the hash is stored');

      const browser = new AdminBrowser(t);
      assert.equal((await browser.get('/admin/setup?token=wrong')).statusCode, 404);
      const page = await browser.get(`/admin/setup?token=${token}`);
      assert.equal(page.statusCode, 200);
      const weak = await browser.post('/admin/setup', { _csrf: csrfTokenIn(page.body), token, email: 'first@example.com', password: 'short' });
      assert.equal(weak.statusCode, 400);
      assert.match(weak.body, /at least 12 characters/);
      const done = await browser.post('/admin/setup', { _csrf: csrfTokenIn(page.body), token, email: 'First@Example.com', password: ADMIN_PASSWORD });
      assert.equal(done.statusCode, 303);
      assert.equal((await browser.get('/admin/organizations')).statusCode, 200, 'signed in right away');

      assert.equal((await new AdminBrowser(t).get(`/admin/setup?token=${token}`)).statusCode, 404);
      const again = new AdminBrowser(t);
      const form = await again.get('/admin/login');
      const reuse = await again.post('/admin/setup', { _csrf: csrfTokenIn(form.body), token, email: 'second@example.com', password: ADMIN_PASSWORD });
      assert.equal(reuse.statusCode, 404);
      assert.equal(await announceAdminSetupLink(t.context), undefined, 'no link once an administrator exists');
      const { entries } = await t.context.admin.listAudit(undefined, { limit: 10, offset: 0 });
      assert.ok(entries.some((e) => e.action === 'admin_user.created' && e.actorEmail === 'setup-link' && e.details.email === 'first@example.com'));
    });
  });

  // Its own app: two live PostgreSQL test schemas at once trip Kysely's migration-table check.
  describe(`setup link versus the CLI (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t.close());

    it('dies when an administrator is created another way, such as wo admin create-user', async () => {
      const token = new URL((await announceAdminSetupLink(t.context))!).searchParams.get('token')!;
      assert.equal((await new AdminBrowser(t).get(`/admin/setup?token=${token}`)).statusCode, 200);
      await createAdmin(t);
      assert.equal((await new AdminBrowser(t).get(`/admin/setup?token=${token}`)).statusCode, 404);
    });
  });
}

describe('session cookie over https', () => {
  it('is marked Secure when the public URL is https', async () => {
    const t = await startTestApp('sqlite', { env: { WO_PUBLIC_URL: 'https://work.example.com' } });
    try {
      await createAdmin(t);
      const response = await new AdminBrowser(t).signIn();
      const setCookie = [response.headers['set-cookie']].flat().find((c) => c?.startsWith('wo_admin_session='))!;
      assert.match(setCookie, /; Secure/);
      const page = await t.app.inject({ method: 'GET', url: '/admin/login' });
      assert.match(page.headers['strict-transport-security'] as string, /max-age=/);
    } finally {
      await t.close();
    }
  });
});
