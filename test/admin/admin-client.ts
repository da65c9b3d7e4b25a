import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/test-app.js';

export const ADMIN_EMAIL = 'ops@example.com';
export const ADMIN_PASSWORD = 'correct horse battery staple';

/** The CSRF token rendered into a page's forms. */
export function csrfTokenIn(body: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!match?.[1]) throw new Error(`no CSRF field in page: ${body.slice(0, 200)}`);
  return match[1];
}

export function formBody(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

/** A browser-like client over app.inject: keeps cookies, sends forms. */
export class AdminBrowser {
  readonly cookies = new Map<string, string>();
  constructor(
    private readonly test: TestApp,
    private readonly ip = '203.0.113.7',
  ) {}

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const expired = cookie.maxAge === 0 || (cookie.expires && cookie.expires.getTime() < Date.now()) || cookie.value === '';
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(await this.test.app.inject({ method: 'GET', url, headers: this.cookieHeader(), remoteAddress: this.ip }));
  }

  async post(url: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    return this.postEncoded(url, formBody(fields));
  }

  /** Posts a form body exactly as given, already urlencoded (or not quite). */
  async postEncoded(url: string, payload: string): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.test.app.inject({
        method: 'POST',
        url,
        payload,
        headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        remoteAddress: this.ip,
      }),
    );
  }

  /** Fetches the sign-in page and submits it. */
  async signIn(email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<LightMyRequestResponse> {
    const page = await this.get('/admin/login');
    return this.post('/admin/login', { _csrf: csrfTokenIn(page.body), email, password });
  }

  /** The CSRF token of the signed-in session, read from a page. */
  async csrfToken(): Promise<string> {
    return csrfTokenIn((await this.get('/admin/organizations')).body);
  }
}

export async function createAdmin(test: TestApp, email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
  return test.context.admin.createUser(email, password, { userId: null, email: 'test' });
}
