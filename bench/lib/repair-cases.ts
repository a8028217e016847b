/**
 * The `tools/call` messages the core section repairs (`repairToolCall`):
 * calls to the demo's tools as models send them, and one large call.
 */
import { echoTools } from "../../demo/src/tools";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import type { ToolResolver } from "../../src/toolmap/resolve-tool";
import { resolverOf } from "../../support/resolver";

function schemaOf(name: string): unknown {
  const tool = echoTools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no demo tool ${name}`);
  return tool.inputSchema;
}

/** 200 declared fields and an array of 100 records, sent with the key spellings and types models get wrong. */
function largeCall() {
  const record = {
    type: "object",
    properties: {
      sku: { type: "string" },
      quantity: { type: "integer" },
      unit_price: { type: "number" },
    },
  };
  const properties: Record<string, unknown> = { line_items: { type: "array", items: record } };
  const args: Record<string, unknown> = {
    lineItems: Array.from({ length: 100 }, (_, i) => ({
      sku: `SKU-${i}`,
      quantity: String(i),
      "unit-price": `${i}.5`,
    })),
  };
  for (let i = 0; i < 200; i++) {
    properties[`field_${i}`] = { type: i % 2 ? "integer" : "string" };
    args[`field${i}`] = i % 2 ? String(i) : `value ${i}`;
  }
  return { schema: { type: "object", properties }, args };
}

/**
 * 1,000 objects of one schema that reads, at every object, 64 `allOf` branches of 16 `$ref`
 * hops each: read again for each value, this call took 5 s of CPU (14 s for 3,000 objects),
 * each reading bounded and their number the client's.
 */
function branchingCall() {
  const $defs: Record<string, unknown> = { end: { type: "object" } };
  for (let hop = 0; hop < 16; hop++) {
    $defs[`hop${hop}`] = { $ref: hop === 15 ? "#/$defs/end" : `#/$defs/hop${hop + 1}` };
  }
  const record = {
    type: "object",
    properties: { sku: { type: "string" } },
    allOf: Array.from({ length: 64 }, () => ({ $ref: "#/$defs/hop0" })),
  };
  const schema = {
    type: "object",
    properties: { records: { type: "array", items: record } },
    $defs,
  };
  const args = { records: Array.from({ length: 1_000 }, (_, i) => ({ sku: `SKU-${i}` })) };
  return { schema, args };
}

/**
 * 10 fields, each of 64 `allOf` branches that `$ref` a chain of 16 hops, every pointer of 400
 * tokens into a 0.5 MB schema: walked again at every hop, this call took 0.9 s of CPU.
 */
function pointerCall() {
  const tokens = 400;
  const $defs: Record<string, unknown> = {};
  let deepest = $defs;
  for (let level = 1; level < tokens; level++) {
    const next: Record<string, unknown> = {};
    deepest.a = next;
    deepest = next;
  }
  const at = `#/$defs${"/a".repeat(tokens - 1)}`;
  for (let hop = 0; hop < 16; hop++) deepest[`hop${hop}`] = { $ref: `${at}/hop${hop + 1}` };
  deepest.hop16 = { type: "string" };
  const properties: Record<string, unknown> = {};
  const args: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) {
    properties[`field_${i}`] = {
      allOf: Array.from({ length: 64 }, () => ({ $ref: `${at}/hop0` })),
    };
    args[`field_${i}`] = `value ${i}`;
  }
  return { schema: { type: "object", properties, $defs }, args };
}

const resolverFor = (original: string, inputSchema: unknown): ToolResolver =>
  resolverOf({ original, schemaHash: "", inputSchema });

function call(name: string, args: unknown): JsonRpcRequest {
  return {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name, arguments: args },
  } as JsonRpcRequest;
}

const large = largeCall();
const branching = branchingCall();
const pointers = pointerCall();
export const REPAIR_CASES: Array<{
  label: string;
  /** Its target, `< 50 µs`, where the call is one models send every day. */
  typical: boolean;
  /** Its target otherwise, in ms, where it has one. */
  goalMs?: number;
  message: JsonRpcRequest;
  resolve: ToolResolver;
}> = [
  {
    label: "valid call to a renamed tool (`files_read`)",
    typical: true,
    message: call("files_read", { path: "src/main.ts", max_bytes: 512 }),
    resolve: resolverFor("files.read", schemaOf("files.read")),
  },
  {
    label: "seed case: `payload-json` as a JSON string, amount as a string",
    typical: true,
    message: call("catering_invoice", {
      "payload-json": '{"invoice_id":"INV-1042","amount":"19.5"}',
    }),
    resolve: resolverFor("catering.invoice", schemaOf("catering.invoice")),
  },
  {
    label: "large: 200 fields and 100 records, keys misspelled, numbers as strings",
    typical: false,
    message: call("bulk_import", large.args),
    resolve: resolverFor("bulk.import", large.schema),
  },
  {
    label: "branching: 1,000 objects of a schema that reads 64 `allOf` branches of 16 `$ref` hops",
    typical: false,
    goalMs: 50,
    message: call("bulk_tag", branching.args),
    resolve: resolverFor("bulk.tag", branching.schema),
  },
  {
    label: "pointers: 10 fields of 64 `allOf` branches, each a `$ref` of 400 tokens",
    typical: false,
    goalMs: 50,
    message: call("deep_tag", pointers.args),
    resolve: resolverFor("deep.tag", pointers.schema),
  },
];
