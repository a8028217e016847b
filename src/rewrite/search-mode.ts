/**
 * Search mode (docs/search-mode.md): a whole listing over the profile's tool
 * ceiling reaches the client as two tools of the proxy's own, `search_tools`
 * and `call_tool`. `search_tools` is answered here from the listing in isolate
 * memory (toolmap/tool-search.ts); `call_tool` becomes the call it carries,
 * which then takes the way back every direct call takes (tools-call.ts), its
 * refusals answered as `call_tool`'s tool errors (`RefusedAs`).
 */
import type { CallReport } from "../analytics/call-record";
import { type Malformed, REQUEST_KEYS, recoverArguments } from "../args/recover";
import {
  type ExactText,
  isPlainObject,
  keyFoldedTwice,
  keyTwiceReason,
  PLACES_ONLY,
  stringifyExact,
  writtenAsIn,
} from "../json";
import { type JsonRpcRequest, toolError } from "../protocol/jsonrpc";
import { completeResult, type Revision } from "../protocol/revision";
import type { ToolsListResult } from "../protocol/tools-list";
import type { Profile } from "../schemas/profile";
import { schemaView } from "../schemas/view";
import { queryRead, type SearchableTool, wordsOf } from "../toolmap/search-terms";
import type { ToolSearch } from "../toolmap/tool-search";
import { PROTOCOL_ERROR, type RefusedAs, refusal } from "./call-refusal";
import { jsonBytes } from "./local-answers";
import { shapedResult } from "./tools-list";

export const SEARCH_TOOLS = "search_tools";
export const CALL_TOOL = "call_tool";

const DEFAULT_LIMIT = 8;
const MAX_LIMIT = 20;

const SEARCH_SCHEMA = {
  type: "object",
  properties: {
    query: {
      type: "string",
      description: "What the tool should do, in a few words (for example: create invoice).",
    },
    limit: {
      type: "integer",
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `How many tools to return, best first. Default: ${DEFAULT_LIMIT}.`,
    },
  },
  required: ["query"],
};

const CALL_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", description: "The tool's name, as search_tools gave it." },
    arguments: {
      type: "object",
      description: "The tool's arguments, as the input schema search_tools gave for it says.",
    },
  },
  required: ["name"],
};

/** The two tools, their schemas in the profile's view like every other tool's. */
function searchModeTools(profile: Profile, total: number): unknown[] {
  const view = (schema: unknown) => schemaView(schema, profile.schemas).schema;
  return [
    {
      name: SEARCH_TOOLS,
      description: `Finds tools of this server (${total} in all) by what they do. Answers with each match's name, description and input schema; call one with ${CALL_TOOL}.`,
      inputSchema: view(SEARCH_SCHEMA),
    },
    {
      name: CALL_TOOL,
      description: `Calls a tool that ${SEARCH_TOOLS} found, by its name, with its arguments.`,
      inputSchema: view(CALL_SCHEMA),
    },
  ];
}

/** The listing the client sees in search mode: the origin's result with the two tools, on one page. */
export function searchModeResult(
  result: ToolsListResult,
  profile: Profile,
  total: number,
): ToolsListResult {
  const { nextCursor: _, ...rest } = result;
  return shapedResult(writtenAsIn({ ...rest, tools: searchModeTools(profile, total) }, result));
}

/**
 * The arguments of one of the proxy's two tools, from wherever the client put
 * them, and the envelope; or, for arguments that are no object, the `-32602`
 * a direct call gets (docs/errors.md): a malformed `tools/call`, refused,
 * logged and recorded as a direct call's (`malformed_arguments`), not a tool
 * error that calls the query or name missing. Arguments sent as JSON text
 * that write a key beside another of another case (`path`, `Path`:
 * `ambiguous_arguments`) are refused as a direct call's text is
 * (tools-call.ts), but as the tool's own error (`RefusedAs`): what the text
 * holds is the tool's input. The body's one reading
 * (transport/post-body.ts) never saw inside the text, and the call
 * `call_tool` carries would reach the origin with both keys, repaired by one
 * and read, by an origin that ignores case, by the other. A refusal names
 * `search_tools` as a search's record does, and no tool `call_tool` carries:
 * its name is not read.
 */
function argumentsOf(
  message: JsonRpcRequest,
  name: typeof SEARCH_TOOLS | typeof CALL_TOOL,
  revision: Revision,
):
  | { args: Record<string, unknown>; envelope: Record<string, unknown>; exact?: ExactText }
  | { refused: LocalAnswer } {
  const recovered = recoverArguments(isPlainObject(message.params) ? message.params : {});
  const tool = name === SEARCH_TOOLS ? name : undefined;
  const refused = (reason: string, text: string, as: RefusedAs, malformed?: Malformed) => ({
    refused: refusal(message, { tool, name }, reason, `Invalid params: ${text}`, as, undefined, {
      malformed,
    }),
  });
  if (recovered.kind === "refused") {
    return refused("malformed_arguments", recovered.message, PROTOCOL_ERROR, recovered.malformed);
  }
  // As a call's own (tools-call.ts): arguments the body's one reading did not read as they are
  // (JSON text, of `arguments` or `args`) are checked again.
  const twice = recovered.changed ? keyFoldedTwice(recovered.arguments) : undefined;
  if (twice !== undefined) {
    const text = `the arguments write ${keyTwiceReason(twice)}`;
    return refused("ambiguous_arguments", text, { kind: "tool_error", revision });
  }
  const { exact } = recovered;
  return {
    args: recovered.arguments ?? {},
    envelope: recovered.envelope,
    ...(exact ? { exact } : {}),
  };
}

function limitOf(value: unknown): number {
  const limit = typeof value === "string" ? Number(value) : value;
  return typeof limit === "number" && Number.isInteger(limit) && limit > 0
    ? Math.min(limit, MAX_LIMIT)
    : DEFAULT_LIMIT;
}

const shown = ({ name, title, description, inputSchema }: SearchableTool) => ({
  name,
  ...(title === undefined ? {} : { title }),
  ...(description === undefined ? {} : { description }),
  inputSchema,
});

/**
 * An answer of the proxy's own to one of its two tools, and what call
 * analytics records of the call (analytics/call-record.ts); `response` is
 * `undefined` where it was not built, as it would pass its room.
 */
export interface LocalAnswer {
  response: unknown | undefined;
  report: CallReport;
}

/** What a search's record says of it: the tool is `search_tools`. */
const SEARCHED: CallReport = { tool: SEARCH_TOOLS, repairs: {} };

/**
 * The answer to a `search_tools` call: the best matches, as text a model
 * reads and as structured content; none when it would take more than
 * `room` bytes (local-answers.ts), which is known as it is built, match by
 * match, before the whole is.
 */
export function answerSearch(
  message: JsonRpcRequest,
  search: ToolSearch,
  revision: Revision,
  room: number,
): LocalAnswer {
  const read = argumentsOf(message, SEARCH_TOOLS, revision);
  if ("refused" in read) return read.refused;
  const { args } = read;
  if (typeof args.query !== "string") {
    const text = `${SEARCH_TOOLS} needs a \`query\`: a few words saying what the tool should do.`;
    return { response: toolError(message.id, text, revision), report: SEARCHED };
  }
  const { query } = args;
  const found = search.search(query, limitOf(args.limit)).map(shown);
  const total = search.size;
  const call = `Call one with ${CALL_TOOL}: {"name": <name>, "arguments": {…}}.`;
  // What was searched, as the heading says it: what is read of a query (search-terms.ts).
  const searched = queryRead(query);
  const said = searched.length < query.length ? `${searched}…` : query;
  const heading =
    wordsOf(query).length === 0
      ? `No words to search for in "${said}": the first ${found.length} of ${total} tools. Say what the tool should do. ${call}`
      : found.length === 0
        ? `No tool of ${total} matches "${said}". Try other words, or fewer.`
        : `${found.length} of ${total} tools match "${said}", best first. ${call}`;
  let bytes = jsonBytes(heading);
  const lines: string[] = [heading];
  for (const tool of found) {
    // The schema as the caller's listing wrote its numbers (a 64-bit id is no double's digits).
    const schema = stringifyExact(tool.inputSchema, PLACES_ONLY);
    const line = `\n${tool.name}: ${tool.description ?? tool.title ?? "(no description)"}\ninput schema: ${schema}`;
    // Each match is written twice: in the text, and as structured content.
    bytes += jsonBytes(line) + jsonBytes(tool);
    if (bytes > room) return { response: undefined, report: SEARCHED };
    lines.push(line);
  }
  const result = {
    content: [{ type: "text", text: lines.join("\n") }],
    structuredContent: { tools: found },
  };
  const response = { jsonrpc: "2.0", id: message.id, result: completeResult(result, revision) };
  return { response, report: SEARCHED };
}

export type UnwrappedCall =
  | {
      kind: "call";
      message: JsonRpcRequest;
      /**
       * How the JSON text `call_tool`'s arguments were sent as wrote its values: the carried
       * call is written with them (`1e400` is no `null`, `9007199254740993` no `…992`).
       */
      exact?: ExactText;
    }
  | ({ kind: "answer" } & LocalAnswer);

/**
 * The call a `call_tool` carries, as if the client had made it directly: the
 * request's fields of its params (`_meta`, `task`, …) kept, `name` the inner tool's, and what the
 * model wrote beside it as that call's params, so that its arguments are
 * recovered as a direct call's are (tools-call.ts): in `arguments`, as JSON
 * text, beside `name`, or in `args`. What belongs to the request (`_meta`,
 * …) is the client's, not the model's to write: so are the members beside
 * arguments that hold them (an `args` among them), forwarded beside a direct
 * call's as sent (args/recover.ts), left out of the carried call. Other
 * members of `call_tool`'s own `params` are not carried either: beside what
 * the model wrote inline, the carried call would take them for its
 * arguments, and an `args` there was the arguments of a call whose model
 * wrote only a `name`.
 */
export function unwrapCall(message: JsonRpcRequest, revision: Revision): UnwrappedCall {
  const read = argumentsOf(message, CALL_TOOL, revision);
  if ("refused" in read) return { kind: "answer", ...read.refused };
  const { args: outer, envelope, exact } = read;
  const { name } = outer;
  if (typeof name !== "string" || name === "") {
    return {
      kind: "answer",
      response: toolError(
        message.id,
        `${CALL_TOOL} needs \`name\`: the name of a tool ${SEARCH_TOOLS} found.`,
        revision,
      ),
      report: { repairs: {} },
    };
  }
  // fromEntries: a key named `__proto__` stays an ordinary key.
  const given = Object.entries(outer).filter(([key]) => key !== "name" && !REQUEST_KEYS.has(key));
  const carried = recoverArguments({ name, ...Object.fromEntries(given) });
  const unread = carried.kind === "recovered" ? carried.unknown : {};
  const written = given.filter(([key]) => !Object.hasOwn(unread, key));
  // Each member as the text it came from wrote it: the carried call's first, then the envelope's
  // (`name` and the request's fields: an `args` beside call_tool's arguments is no part of it).
  const params = { ...envelope, name, ...Object.fromEntries(written) };
  writtenAsIn(writtenAsIn(params, outer), envelope);
  const call = writtenAsIn({ ...message, params }, message);
  return { kind: "call", message: call, ...(exact ? { exact } : {}) };
}
