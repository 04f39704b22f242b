/**
 * The Solana Action routes (graphql/actions/action-routes.ts) in the OpenAPI document. They are
 * served by plain hono routes (their bodies are the Actions specification's, not the API's), so
 * they are described here by hand, from the specification's shapes (@solana/actions-spec).
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ACTIONS_BASE } from "../actions/action-routes";
import { API_ERROR_CODES } from "../../service/api-error";

const ActionError = z
  .object({ message: z.string(), code: z.string() })
  .meta({ id: "ActionError", description: "the Actions specification's error body, with the API's code" });
const LinkedAction = z.object({
  type: z.enum(["transaction", "post"]),
  href: z.string().meta({ description: "a path on this server; {amount} and {outcome} are the parameters' values" }),
  label: z.string(),
  parameters: z.array(z.object({ name: z.string(), type: z.string(), label: z.string().optional(), required: z.boolean().optional() }).loose()).optional(),
});
const ActionGet = z
  .object({
    type: z.literal("action"),
    icon: z.string().meta({ description: "absolute URL of the card PNG" }),
    title: z.string(),
    description: z.string(),
    label: z.string(),
    disabled: z.boolean().optional(),
    links: z.object({ actions: z.array(LinkedAction) }).optional(),
    error: z.object({ message: z.string() }).optional(),
  })
  .meta({ id: "ActionGetResponse" });
const ActionTransaction = z
  .object({
    type: z.literal("transaction"),
    transaction: z.string().meta({ description: "base64 of the unsigned transaction; the account is its fee payer and only signer" }),
    message: z.string(),
    links: z.object({ next: z.object({ type: z.literal("post"), href: z.string() }) }),
  })
  .meta({ id: "ActionTransactionResponse" });
const ActionDone = z
  .object({
    type: z.literal("post"),
    message: z.string(),
    links: z.object({ next: z.object({ type: z.literal("inline"), action: z.object({ type: z.literal("completed") }).loose() }) }),
  })
  .meta({ id: "ActionCompletedResponse" });
const ActionPost = z.object({ account: z.string().meta({ description: "the visitor's wallet (base58)" }) }).meta({ id: "ActionPostRequest" });
const ActionDonePost = ActionPost.extend({ signature: z.string() }).meta({ id: "ActionNextPostRequest" });
const ActionsJson = z.object({ rules: z.array(z.object({ pathPattern: z.string(), apiPath: z.string() })) }).meta({ id: "ActionsJson" });

const json = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });
/** An error answer: the Actions specification's body, carrying the API's code for the status. */
const actionError = (status: keyof typeof API_ERROR_CODES, description: string) => json(`${description} (code ${API_ERROR_CODES[status]})`, ActionError);
const errors = {
  400: actionError(400, "bad input or a rule refused (nothing built)"),
  404: actionError(404, "unknown offer or poll"),
  409: actionError(409, "the offer or pool moved on"),
  503: actionError(503, "chain or store unavailable"),
};

/** Adds every action route to `app`'s OpenAPI registry (documentation only: nothing is served by it). */
export function documentActions(app: OpenAPIHono): void {
  const r = app.openAPIRegistry;
  const tags = ["actions"];
  const amount = z.string().meta({ description: "stablecoin units, at most 6 decimals (5, 2.5)" });
  r.registerPath({
    method: "get",
    path: "/actions.json",
    tags,
    operationId: "actionsJson",
    summary: "Maps the share pages to the action routes",
    responses: { 200: json("the rules", ActionsJson) },
  });
  r.registerPath({
    method: "get",
    path: `${ACTIONS_BASE}/contracts/{address}`,
    tags,
    operationId: "contractsAction",
    summary: "The Action of a contract: take the best offer of a side (each button posts to that offer's action)",
    request: { params: z.object({ address: z.string() }) },
    responses: { 200: json("the Action", ActionGet), 400: errors[400], 404: errors[404] },
  });
  for (const [kind, param, query] of [
    ["offers", "address", z.object({ amount })],
    ["polls", "identifier", z.object({ outcome: z.string().meta({ description: "outcome index" }), amount })],
  ] as const) {
    const params = z.object({ [param]: z.string() });
    const path = `${ACTIONS_BASE}/${kind}/{${param}}`;
    const what = kind === "offers" ? "an offer (take it)" : "a public poll (pick an outcome)";
    r.registerPath({
      method: "get",
      path,
      tags,
      operationId: `${kind}Action`,
      summary: `The Action of ${what}`,
      request: { params },
      responses: { 200: json("the Action", ActionGet), 400: errors[400], 404: errors[404] },
    });
    r.registerPath({
      method: "post",
      path,
      tags,
      operationId: `${kind}ActionTransaction`,
      summary: `A transaction for the visitor's wallet: ${kind === "offers" ? "a take" : "a pick"}, checked against every rule first`,
      request: { params, query, body: { content: { "application/json": { schema: ActionPost } } } },
      responses: { 200: json("the unsigned transaction", ActionTransaction), ...errors, 403: actionError(403, "a blocked wallet or creator") },
    });
    r.registerPath({
      method: "post",
      path: `${path}/done`,
      tags,
      operationId: `${kind}ActionDone`,
      summary: "What the sent transaction became",
      request: { params, body: { content: { "application/json": { schema: ActionDonePost } } } },
      responses: { 200: json("the completed action", ActionDone), 400: errors[400], 404: errors[404] },
    });
    r.registerPath({
      method: "get",
      path: `${path}/card.png`,
      tags,
      operationId: `${kind}ActionCard`,
      summary: "The card PNG (the Action's icon)",
      request: { params },
      responses: {
        200: { description: "a 600 x 600 PNG", content: { "image/png": { schema: z.string().meta({ format: "binary" }) } } },
        400: errors[400],
        404: errors[404],
      },
    });
  }
}
