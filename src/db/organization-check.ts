/**
 * How a row found by its own key (its `id`, or another column with an index of its own) is checked
 * against the caller's organization: `org_id IS NOT DISTINCT FROM ?` rather than `org_id = ?`.
 *
 * Both mean the same for a NOT NULL column, but PostgreSQL never uses the first as an index condition,
 * so the row's own index is the only way in. With `=`, a statement prepared while a table is empty or
 * has no statistics (a fresh deployment, or a server with autovacuum off) costs the same through the
 * primary key and through any index that leads on `org_id` (`records_org_updated`, …), and the
 * planner picked the latter. The connection keeps that generic plan for its life: once the
 * organization held thousands of work orders, reading one by id read all of them, each lookup
 * costing what the whole organization's rows cost (bench/analysis.md, "Session 15"). Lists, which are
 * meant to walk an organization's index, keep `=`.
 */
export const IN_ORGANIZATION = 'is not distinct from' as const;

/** The same check in SQL text written by hand (RowAppends): `"org_id" IS NOT DISTINCT FROM <placeholder>`. */
export function inOrganizationSql(placeholder: string): string {
  return `"org_id" IS NOT DISTINCT FROM ${placeholder}`;
}
