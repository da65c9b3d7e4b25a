import {
  ColumnNode,
  ReferenceNode,
  SelectionNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type TableNode,
  type UnknownRow,
} from 'kysely';
import { TABLE_COLUMNS } from './table-columns.js';

/**
 * Sends `selectAll()` and `returningAll()` of one table as that table's columns by name instead of
 * `*`. A statement whose result columns come from `*` cannot be prepared safely on PostgreSQL (see
 * withNamedStatements): after a migration adds a column, the prepared statement's result type changes
 * and PostgreSQL refuses to run it. With the columns named, the statement is the same after the
 * migration, and every read of a row by id (the API key of every request among them) is parsed and
 * planned once per connection instead of on every request.
 *
 * Only the top-level statement's own table is expanded: a `*` over a join, or in a subquery, stays a
 * `*` and runs unnamed.
 */
export class ExplicitColumnsPlugin implements KyselyPlugin {
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    switch (node.kind) {
      case 'SelectQueryNode': {
        const from = node.from?.froms;
        if (!node.selections || node.joins?.length || from?.length !== 1) return node;
        const selections = expandSelections(node.selections, from[0]!);
        return selections === node.selections ? node : { ...node, selections };
      }
      case 'InsertQueryNode':
        return node.returning && node.into ? withReturning(node, node.into) : node;
      case 'UpdateQueryNode':
        return node.returning && node.table && !node.from && !node.joins?.length ? withReturning(node, node.table) : node;
      case 'DeleteQueryNode':
        return node.returning && node.from.froms.length === 1 && !node.using && !node.joins?.length ? withReturning(node, node.from.froms[0]!) : node;
      default:
        return node;
    }
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

function withReturning<T extends RootOperationNode & { returning?: { kind: 'ReturningNode'; selections: ReadonlyArray<SelectionNode> } }>(node: T, table: OperationNode): T {
  const selections = expandSelections(node.returning!.selections, table);
  return selections === node.returning!.selections ? node : { ...node, returning: { ...node.returning!, selections } };
}

/** The selections with each `*` (or `table.*`) of `from` replaced by its columns; the same array when there is none. */
function expandSelections(selections: ReadonlyArray<SelectionNode>, from: OperationNode): ReadonlyArray<SelectionNode> {
  if (from.kind !== 'TableNode' || (from as TableNode).table.schema) return selections;
  const tableName = (from as TableNode).table.identifier.name;
  const columns = columnSelections(tableName);
  const isStar = (node: SelectionNode) =>
    node.selection.kind === 'SelectAllNode' ||
    (node.selection.kind === 'ReferenceNode' && node.selection.column.kind === 'SelectAllNode' && node.selection.table?.table.identifier.name === tableName);
  if (!columns || !selections.some(isStar)) return selections;
  return selections.flatMap((node) => (isStar(node) ? columns : [node]));
}

const selectionsByTable = new Map<string, readonly SelectionNode[] | undefined>();

/** A table's columns as selection nodes (immutable, so built once and shared). */
function columnSelections(table: string): readonly SelectionNode[] | undefined {
  if (!selectionsByTable.has(table)) {
    const columns = (TABLE_COLUMNS as Record<string, readonly string[] | undefined>)[table];
    selectionsByTable.set(table, columns?.map((column) => SelectionNode.create(ReferenceNode.create(ColumnNode.create(column)))));
  }
  return selectionsByTable.get(table);
}
