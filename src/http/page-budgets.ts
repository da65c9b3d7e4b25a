import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Clock } from '../clock.js';

/** How long one budget window lasts: the admin sign-in's throttling counts over the same span. */
export const PAGE_BUDGET_WINDOW_MS = 15 * 60_000;

export interface BudgetOutcome {
  allowed: boolean;
  /** Seconds until the window ends and the budget is whole again. */
  retryAfterSeconds: number;
}

/**
 * The request budgets of a public page opened by a link's token (the job page, the intake form): a
 * fixed-window counter per link and per client address, kept in the database so that every API
 * process shares them (as the admin sign-in's throttling is), without Redis. One upsert per budget
 * per request: an address spends its budget whether or not the token it sends opens anything, so
 * guessing tokens is bounded as well as using one. Each page counts under its own `namespace`, in
 * the one table (`job_page_budgets`, named for the page that came first).
 */
export class PageBudgets {
  /**
   * Budgets this process found spent, until their window ends (ms). A spent budget stays spent until
   * then whatever any process does (counters only go up within a window), so a flood past it is
   * refused here without a round trip to the database. Bounded: past the cap, the oldest go first.
   */
  private readonly spentUntil = new Map<string, number>();
  private static readonly REMEMBERED = 10_000;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly limits: { namespace: string; perLink: number; perAddress: number },
  ) {}

  spendForAddress(address: string): Promise<BudgetOutcome> {
    return this.spend(`${this.limits.namespace}:address:${address}`, this.limits.perAddress);
  }

  spendForLink(linkId: string): Promise<BudgetOutcome> {
    return this.spend(`${this.limits.namespace}:link:${linkId}`, this.limits.perLink);
  }

  private async spend(key: string, limit: number): Promise<BudgetOutcome> {
    const now = this.clock.now();
    const spentUntil = this.spentUntil.get(key);
    if (spentUntil !== undefined) {
      if (spentUntil > now.getTime()) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((spentUntil - now.getTime()) / 1000)) };
      this.spentUntil.delete(key);
    }
    const nowText = now.toISOString();
    // A window that started this long ago is over: the counter starts again.
    const over = new Date(now.getTime() - PAGE_BUDGET_WINDOW_MS).toISOString();
    const row = await this.db
      .insertInto('job_page_budgets')
      .values({ key, window_started_at: nowText, used: 1 })
      .onConflict((conflict) =>
        conflict.column('key').doUpdateSet({
          used: sql<number>`CASE WHEN job_page_budgets.window_started_at <= ${over} THEN 1 ELSE job_page_budgets.used + 1 END`,
          window_started_at: sql<string>`CASE WHEN job_page_budgets.window_started_at <= ${over} THEN ${nowText} ELSE job_page_budgets.window_started_at END`,
        }),
      )
      .returning(['used', 'window_started_at'])
      .executeTakeFirstOrThrow();
    const endsAt = Date.parse(row.window_started_at) + PAGE_BUDGET_WINDOW_MS;
    const allowed = Number(row.used) <= limit;
    if (!allowed) this.remember(key, endsAt);
    return { allowed, retryAfterSeconds: Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)) };
  }

  private remember(key: string, until: number): void {
    if (this.spentUntil.size >= PageBudgets.REMEMBERED) this.spentUntil.delete(this.spentUntil.keys().next().value!);
    this.spentUntil.set(key, until);
  }

  /** Deletes counters whose window is over, of every namespace (a background job of the workers). */
  async purgeEnded(): Promise<void> {
    const over = new Date(this.clock.now().getTime() - PAGE_BUDGET_WINDOW_MS).toISOString();
    await this.db.deleteFrom('job_page_budgets').where('window_started_at', '<=', over).execute();
  }
}
