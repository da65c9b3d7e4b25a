import { OperationNodeTransformer, sql, type KyselyPlugin, type LimitNode, type OperationNode, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryId, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';

/**
 * Writes every `LIMIT ?` as `LIMIT (? + 0)` on SQLite: the same limit, still a bound parameter.
 *
 * Why: SQLite's planner reads the value bound to a bare `LIMIT ?` when it plans the statement, and
 * a statement whose plan used a bound value is prepared again each time that parameter is bound anew,
 * that is, at every execution of a cached statement, which made an indexed one-row lookup several
 * times dearer. An expression the planner cannot evaluate leaves the plan alone (the same index walk)
 * and costs what a literal limit costs (figures: bench/analysis.md, "Moved from docs/architecture.md").
 * Kysely compiles every `.limit(n)` to a bound parameter, so this is done once, here, for all of them.
 */
export class UnplannedLimitPlugin implements KyselyPlugin {
  private readonly transformer = new UnplannedLimitTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node, args.queryId);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

class UnplannedLimitTransformer extends OperationNodeTransformer {
  protected override transformLimit(node: LimitNode, queryId?: QueryId): LimitNode {
    const limit = this.transformNode(node.limit, queryId);
    return { ...node, limit: sql`(${asExpression(limit)} + 0)`.toOperationNode() };
  }
}

function asExpression(node: OperationNode) {
  return { toOperationNode: () => node };
}
