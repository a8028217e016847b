/**
 * A deterministic `tools/list` result shaped like real servers': descriptions
 * of a sentence or two, schemas of 2 to 8 properties (strings with formats,
 * integers with bounds, enums, arrays, a nested object, `required`, some with
 * `additionalProperties: false`), annotations; about 760 bytes of JSON each.
 * Half the names are illegal for OpenAI (dots, slashes, colons, spaces, over
 * 64 characters), and one tool in twenty collides with another once sanitized
 * (`x.y` beside `x/y`).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

const SERVICES = ["github", "jira", "slack", "drive", "billing", "crm", "search", "calendar"];
const VERBS = ["list", "get", "create", "update", "delete", "search", "sync", "export"];
const NOUNS = ["issue", "page", "message", "file", "invoice", "contact", "event", "report"];

function parts(i: number) {
  return {
    service: SERVICES[i % SERVICES.length],
    verb: VERBS[(i >> 3) % VERBS.length],
    noun: NOUNS[(i >> 6) % NOUNS.length],
  };
}

function toolName(i: number): string {
  const { service, verb, noun } = parts(i);
  switch (i % 20) {
    case 1:
    case 7:
    case 13:
      return `${service}.${verb}_${noun}_${i}`;
    case 3:
    case 15:
      return `${service}/${verb}-${noun}-${i}`;
    case 5:
      return `${service}:${verb}_${noun}_${i}`;
    case 9:
      return `${verb} ${noun} ${i}`;
    case 11:
      return `${service}_integration_service.${verb}_${noun}_with_all_details_for_audit_${i}`;
    // The next tool's name with `.` for `/`: both sanitize to the same name.
    case 16: {
      const next = parts(i + 1);
      return `${next.service}.${next.noun}_${i + 1}`;
    }
    case 17:
      return `${service}/${noun}_${i}`;
    default:
      return `${service}_${verb}_${noun}_${i}`;
  }
}

const PROPERTY_KINDS: Array<(i: number) => Record<string, unknown>> = [
  (i) => ({ type: "string", description: `Identifier of the ${NOUNS[i % NOUNS.length]}.` }),
  () => ({ type: "integer", minimum: 1, maximum: 100, description: "Page size." }),
  () => ({ type: "boolean", description: "Include archived items." }),
  () => ({ type: "string", enum: ["asc", "desc"], description: "Sort order." }),
  () => ({ type: "string", format: "date-time", description: "Only items changed since." }),
  () => ({ type: "array", items: { type: "string" }, description: "Labels to filter by." }),
  () => ({ type: "number", minimum: 0, description: "Amount in the account's currency." }),
  () => ({
    type: "object",
    description: "Where to deliver the result.",
    properties: { channel: { type: "string" }, notify: { type: "boolean" } },
    required: ["channel"],
  }),
];

const PROPERTY_NAMES = ["id", "limit", "include_archived", "order", "since", "labels", "amount"];

function inputSchema(i: number): Tool["inputSchema"] {
  const count = 2 + (i % 7);
  const properties: Record<string, Record<string, unknown>> = {};
  for (let p = 0; p < count; p++) {
    const kind = (i + p) % PROPERTY_KINDS.length;
    properties[PROPERTY_NAMES[kind] ?? "target"] = PROPERTY_KINDS[kind]?.(i + p) ?? {};
  }
  return {
    type: "object",
    properties,
    required: Object.keys(properties).slice(0, 1),
    ...(i % 3 === 0 ? { additionalProperties: false } : {}),
  };
}

export function realisticTool(i: number): Tool {
  const { service, verb, noun } = parts(i);
  return {
    name: toolName(i),
    description: `${verb} ${noun}s in ${service}. Returns at most one page of results; use the cursor in the result to read the next page.`,
    inputSchema: inputSchema(i),
    annotations: { readOnlyHint: i % 4 === 0, openWorldHint: true },
  };
}

export function realisticListing(size: number): { tools: Tool[] } {
  return { tools: Array.from({ length: size }, (_, i) => realisticTool(i)) };
}

/**
 * A listing asked for from its start, in one page (rewrite/listing-answer.ts
 * `WholeListing`): what a client's first `tools/list` is, and the only answer
 * the proxy remembers and reuses.
 */
export const WHOLE_LISTING = {
  isFirstPage: () => true,
  readRest: async () => [],
};
