/**
 * Repair and validation run on every `tools/call` of a known tool. Budget: a
 * typical call repaired and validated in well under 1 ms.
 */
import { bench, describe } from "vitest";
import { echoTools } from "../demo/src/tools";
import { recoverArguments } from "../src/args/recover";
import { repairArguments } from "../src/args/repair";
import { validateArguments } from "../src/args/validate";

const invoice = echoTools.find((tool) => tool.name === "catering.invoice")?.inputSchema;
const files = echoTools.find((tool) => tool.name === "files.read")?.inputSchema;

const wide = {
  type: "object",
  properties: Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [`field_${i}`, { type: i % 2 ? "integer" : "string" }]),
  ),
};
const wideArgs = Object.fromEntries(
  Array.from({ length: 50 }, (_, i) => [`field${i}`, i % 2 ? String(i) : i]),
);

describe("tools/call arguments", () => {
  bench("already valid: repair + validate", () => {
    const { arguments: args } = repairArguments({ path: "src/main.ts", max_bytes: 512 }, files);
    validateArguments(args, files);
  });
  bench("seed case: recover + repair + validate", () => {
    const recovered = recoverArguments({
      name: "catering_invoice",
      arguments: { "payload-json": '{"invoice_id":"INV-1042","amount":"19.5"}' },
    });
    if (!recovered.ok || !recovered.arguments) throw new Error("unexpected");
    const { arguments: args } = repairArguments(recovered.arguments, invoice);
    validateArguments(args, invoice);
  });
  bench("50 aliased, mistyped fields: repair + validate", () => {
    const { arguments: args } = repairArguments(wideArgs, wide);
    validateArguments(args, wide);
  });
});
