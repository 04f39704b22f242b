/**
 * GraphQL's share of service/json-depth.ts: a request's variables and extensions are measured
 * before yoga or any plugin walks them (the response cache's key, variable coercion), over HTTP
 * (GET and POST) and WebSocket alike; too deep is 400 BAD_REQUEST.
 */
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../service/json-depth";

/** The refusal, or null when `params` nest no deeper than MAX_JSON_DEPTH. */
export function tooDeep(params: { variables?: unknown; extensions?: unknown }): GraphQLError | null {
  for (const what of ["variables", "extensions"] as const)
    if (nestedDeeperThan(params[what]))
      return new GraphQLError(`${what} nested deeper than ${MAX_JSON_DEPTH} levels`, {
        extensions: { code: "BAD_REQUEST", status: 400, http: { status: 400 } },
      });
  return null;
}

/** First among the plugins: nothing else sees a refused request's parameters. */
export function useVariablesDepthLimit(): Plugin {
  return {
    onParams({ params }) {
      const refused = tooDeep(params);
      if (refused) throw refused;
    },
  };
}
