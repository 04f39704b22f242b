/**
 * GraphQL queries run compiled: graphql-jit through envelop's plugin (one compilation per parsed
 * document, kept with it), instead of graphql-js's interpreter, which walked a page of 50 offers
 * field by field and cost more than the page's store reads. Its JSON goes out through the
 * compiled query's own serializer.
 *
 * Only queries whose variables graphql-js accepts: graphql-jit's own variable coercion replaces a
 * scalar's refusal ("first/last must be an integer from 1 to 50") by "Expected type PageSize", so
 * a document with bad variables runs through graphql-js, which refuses it with the scalar's
 * message. Subscriptions keep graphql-js too (the shared subscription events set their own
 * subscribe function), and so do mutations (their cost is the chain, not the execution).
 */
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST, getVariableValues, type ExecutionArgs } from "graphql";

function compiles(args: ExecutionArgs): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== "query") return false;
  const definitions = operation.variableDefinitions ?? [];
  return definitions.length === 0 || !getVariableValues(args.schema, definitions, args.variableValues ?? {}).errors;
}

export function useCompiledQueries(): ReturnType<typeof useGraphQlJit> {
  return useGraphQlJit({}, { enableIf: compiles });
}
