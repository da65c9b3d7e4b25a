import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * Text search that answers the same on SQLite and PostgreSQL: the application stores a
 * lower-cased copy of the searched column (JavaScript's Unicode-aware toLowerCase, where SQLite's
 * LOWER only folds ASCII), and the pattern is lower-cased the same way with LIKE's wildcards escaped.
 */
export function searchKey(text: string): string {
  return text.toLowerCase();
}

/** `%…%` pattern for `LIKE … ESCAPE '\'` that matches `query` literally, anywhere in the text. */
export function containsPattern(query: string): string {
  return `%${searchKey(query.trim()).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `column LIKE '%query%'` on a column written with searchKey(); SQLite needs the ESCAPE clause spelled out. */
export function containsText(column: string, query: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} LIKE ${containsPattern(query)} ESCAPE '\\'`;
}
