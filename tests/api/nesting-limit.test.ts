/**
 * Deeply nested JSON is refused 400 before anything walks it: GraphQL variables (POST and GET),
 * a subscription's variables over WebSocket, and a REST write body. 5,000 nested arrays (10 KB)
 * used to answer HTTP 200 with INTERNAL_SERVER_ERROR and log nothing (issue 21, finding 4).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../stack/local-stack";
import WebSocket from "ws";
import { liveStack } from "./live-clients";
import { makeUser, OFFERS_BASE } from "../support/stack";
import { MAX_JSON_DEPTH } from "../../service/json-depth";

// Answers are read field by field in assertions.
/* eslint-disable @typescript-eslint/no-explicit-any */
let s: LocalStack;
beforeAll(async () => {
  s = await liveStack();
});
afterAll(async () => s?.stop());

/** `depth` arrays, one inside the other, around a string, as JSON text (JSON.stringify would overflow here too). */
const nested = (depth: number): string => "[".repeat(depth) + '"x"' + "]".repeat(depth);

async function postGql(variables: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"query":"{ __typename }","variables":${variables}}`,
  });
  return { status: r.status, body: await r.json() };
}

/** One subscribe message over a raw graphql-ws socket; the first answer to it. */
async function wsOnce(variables: string): Promise<any> {
  const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
  const messages: any[] = [];
  const answered = new Promise<any>((resolve, reject) => {
    ws.on("message", (m) => {
      const msg = JSON.parse(String(m));
      messages.push(msg);
      if (msg.type === "connection_ack") ws.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { indexedSlot }","variables":${variables}}}`);
      else if (msg.type !== "ping") resolve(msg);
    });
    ws.on("close", (code, reason) => reject(new Error(`closed ${code} ${reason}`)));
  });
  await new Promise((r) => ws.once("open", r));
  ws.send(JSON.stringify({ type: "connection_init", payload: {} }));
  try {
    return await answered;
  } finally {
    ws.close();
  }
}

describe("JSON nesting limit", () => {
  it("GraphQL variables nested 5,000 deep are 400 BAD_REQUEST, not an internal error; a shallow one runs", async () => {
    const r = await postGql(`{"v":${nested(5_000)}}`);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe("BAD_REQUEST");
    expect(r.body.errors[0].message).toBe(`variables nested deeper than ${MAX_JSON_DEPTH} levels`);
    // Just within the limit (the variables object is one level): answered.
    const ok = await postGql(`{"v":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.errors, JSON.stringify(ok.body)).toBeUndefined();
    expect(ok.body.data.__typename).toBe("Query");
    expect((await postGql(`{"v":${nested(MAX_JSON_DEPTH)}}`)).status).toBe(400);
  });

  it("over GET too", async () => {
    const url = `${s.url}/graphql?query=${encodeURIComponent("{ __typename }")}&variables=${encodeURIComponent(`{"v":${nested(100)}}`)}`;
    const r = await fetch(url, { headers: { accept: "application/json" } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe("BAD_REQUEST");
  });

  it("a subscription's variables over WebSocket", async () => {
    const r = await wsOnce(`{"v":${nested(5_000)}}`);
    expect(r.type).toBe("next");
    expect(r.payload.errors[0].extensions.code).toBe("BAD_REQUEST");
    expect(r.payload.errors[0].message).toBe(`variables nested deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it("a REST write body", async () => {
    const { token } = await makeUser(s, 0n);
    const r = await fetch(`${s.url}${OFFERS_BASE}/`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: `{"idempotencyKey":"k","contract":${nested(5_000)}}`,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe(`body nested deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
