import { describe, expect, it } from "vitest";
import {
  completeResult,
  requestOnBehalfOf,
  revisionOf,
  unknownRequestId,
} from "../../src/protocol/revision";

const headers = (init: Record<string, string> = {}) => new Headers(init);
const call = (meta: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "t", _meta: meta },
});

describe("the revision of a request", () => {
  it("is the request's own claim, then the header, then 2025-03-26", () => {
    const claim = call({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
    expect(revisionOf(headers({ "mcp-protocol-version": "2025-11-25" }), claim)).toEqual({
      version: "2026-07-28",
      stateless: true,
    });
    expect(revisionOf(headers({ "mcp-protocol-version": "2025-06-18" }), call({}))).toEqual({
      version: "2025-06-18",
      stateless: false,
    });
    expect(revisionOf(headers())).toEqual({ version: "2025-03-26", stateless: false });
  });

  it("is read only in its date form: any other claim or header is none", () => {
    const odd = call({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28\r\nX-Injected: yes",
    });
    expect(revisionOf(headers({ "mcp-protocol-version": "2025-11-25" }), odd).version).toBe(
      "2025-11-25",
    );
    expect(revisionOf(headers({ "mcp-protocol-version": "9999 X-Injected: yes" })).version).toBe(
      "2025-03-26",
    );
    expect(
      revisionOf(headers(), call({ "io.modelcontextprotocol/protocolVersion": 20260728 })),
    ).toEqual({ version: "2025-03-26", stateless: false });
  });

  it("counts any later revision as stateless", () => {
    expect(revisionOf(headers({ "mcp-protocol-version": "2027-01-01" })).stateless).toBe(true);
  });
});

describe("what differs between revisions in what the proxy writes", () => {
  const legacy = revisionOf(headers({ "mcp-protocol-version": "2025-06-18" }));
  const optionalId = revisionOf(headers({ "mcp-protocol-version": "2025-11-25" }));
  const stateless = revisionOf(headers({ "mcp-protocol-version": "2026-07-28" }));

  it("an unknown request id: null up to 2025-06-18, absent from 2025-11-25", () => {
    expect(unknownRequestId(legacy)).toEqual({ id: null });
    expect(unknownRequestId(optionalId)).toEqual({});
    expect(unknownRequestId(stateless)).toEqual({});
  });

  it("a result: resultType complete from 2026-07-28", () => {
    const result = { content: [], isError: true };
    expect(completeResult(result, optionalId)).toEqual(result);
    expect(completeResult(result, stateless)).toEqual({ ...result, resultType: "complete" });
  });

  it("a request of its own, up to 2025-11-25: params as they are, Mcp-Method only if the client sent one", () => {
    const sent = headers({ "mcp-name": "t", "mcp-param-city": "Oslo", authorization: "Bearer x" });
    const request = requestOnBehalfOf(call({}), sent, optionalId, "tools/list", { cursor: "4" });
    expect(request.params).toEqual({ cursor: "4" });
    expect([...request.headers]).toEqual([["authorization", "Bearer x"]]);
  });

  it("a request of its own, from 2026-07-28: the client's envelope, and headers that match it", () => {
    const cause = call({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
      "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
      "io.modelcontextprotocol/logLevel": "debug",
      progressToken: 7,
      traceparent: "00-abc-def-01",
    });
    const sent = headers({ "mcp-method": "tools/call", "mcp-name": "t" });
    const request = requestOnBehalfOf(cause, sent, stateless, "tools/list", {});
    expect(request.params).toEqual({
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
        traceparent: "00-abc-def-01",
      },
    });
    expect(Object.fromEntries(request.headers)).toEqual({
      "mcp-method": "tools/list",
      "mcp-protocol-version": "2026-07-28",
    });
  });

  it("a request of its own, from 2026-07-28, for a client that declared no capabilities", () => {
    const request = requestOnBehalfOf(call({}), headers(), stateless, "tools/list", {});
    expect(request.params).toEqual({
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    });
  });
});
