/**
 * The `tools/call` messages the core section repairs (`repairToolCall`):
 * calls to the demo's tools as models send them, and one large call.
 */
import { echoTools } from "../../demo/src/tools";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import type { ToolResolver } from "../../src/toolmap/resolve-tool";

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

function resolverFor(original: string, inputSchema: unknown): ToolResolver {
  const entry = { original, schemaHash: "", inputSchema };
  const tool = { entry, source: "memory" as const, by: "listed" as const, shown: true };
  return Object.assign(async () => ({ kind: "resolved" as const, tool }), {
    refusalOf: async () => undefined,
    closest: async () => undefined,
    ruleOf: () => undefined,
    refusesCalls: false,
  });
}

function call(name: string, args: unknown): JsonRpcRequest {
  return {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name, arguments: args },
  } as JsonRpcRequest;
}

const large = largeCall();
export const REPAIR_CASES = [
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
];
