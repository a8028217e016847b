/**
 * Step 1 of argument repair (docs/arguments.md, step 1): where the arguments of a
 * `tools/call` really are.
 *
 * - `params.arguments`, a non-empty object: authoritative.
 * - `params.arguments`, a string holding a JSON object: that object, as
 *   authoritative.
 * - absent, `null` or `{}`: the inline non-envelope fields of `params`, or else
 *   `params.args` when it is an object.
 * - empty text (`""`, or JSON's whitespace alone), which some models send for
 *   a tool without arguments: as `null`, where the tool takes a call without
 *   any (`takesNone`); with nothing inline for a tool that wants some, what it
 *   was meant to hold is not known, and it is refused as other text is.
 * - anything else (an array, a number, a string that is no JSON object, or an
 *   `args` that is no object with nothing inline): an error the caller answers
 *   with JSON-RPC `-32602`.
 *
 * The params to forward hold the recovered `arguments` and the envelope fields
 * as they came. Beside authoritative `arguments` they hold every other member
 * too, as the client wrote it and unread: one the proxy does not know may be a
 * later revision's field or a vendor's, which the origin would get without the
 * proxy (lossless), and an `args` there is not used; one a lenient reader
 * takes for an envelope field (`_Meta`) is refused before
 * (`callMemberMisspelled`). Where the arguments are recovered inline, those
 * members are the arguments, and go only there.
 */
import {
  type ExactText,
  isPlainObject,
  MAX_NESTING,
  type Misspelling,
  misspelledAs,
  nestsTooDeep,
  parseExact,
  spellingsOf,
  writtenAsIn,
} from "../json";
import { type JsonType, jsonTypeOf } from "./json-schema";

/** Fields of `params` that belong to the request, not to the tool: never arguments, nor the tool's to name. */
export const REQUEST_KEYS: ReadonlySet<string> = new Set([
  "_meta",
  "task",
  "inputResponses",
  "requestState",
]);

/** Fields of `params` that are the call's envelope, never arguments. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "args", ...REQUEST_KEYS]);

/** Each envelope field by how a lenient reader (json.ts `foldedKey`) reads its name. */
const FOLDED_ENVELOPE = spellingsOf(ENVELOPE_KEYS);

const FOLDED_NAME = spellingsOf(["name"]);

/**
 * A member of a call's `params` that a lenient reader takes for one of the
 * call's own though the proxy reads it as none, with that member: `Name` (or
 * `name\u0000`) where no `name` is written, and beside authoritative
 * arguments an envelope field (`_Meta` for `_meta`, `TASK` for `task`,
 * `inputResponses\u0000x`); `undefined` when none is. Go's `encoding/json`
 * (mcp-go, the Go SDK) reads it as the member the proxy read as absent: a
 * tool the proxy judged no call of, a revision claim it never held the
 * header to, a task it took for a plain call. The request is refused as a
 * message that spells any member the proxy reads so is
 * (protocol/request-reading.ts). Beside arguments written inline, such a
 * member is one of them, and goes inside `arguments`.
 */
export function callMemberMisspelled(params: Record<string, unknown>): Misspelling | undefined {
  const keys = Object.keys(params);
  if (!Object.hasOwn(params, "name")) {
    const name = misspelledAs(keys, FOLDED_NAME);
    if (name !== undefined) return name;
  }
  // Most calls write no such key: their arguments are not read here.
  if (misspelledAs(keys, FOLDED_ENVELOPE) === undefined) return undefined;
  const recovered = recoverArguments(params);
  return recovered.kind === "recovered"
    ? misspelledAs(Object.keys(recovered.unknown), FOLDED_ENVELOPE)
    : undefined;
}

export type RecoveryKind = "as_sent" | "json_string" | "inline" | "args" | "empty";

export type Recovered =
  | {
      kind: "recovered";
      recovery: RecoveryKind;
      /** The arguments to repair and forward; `undefined` when the call had none at all. */
      arguments: Record<string, unknown> | undefined;
      /**
       * The envelope fields of `params`: `name`, `REQUEST_KEYS`, and `args` where the
       * arguments are not authoritative and were not it.
       */
      envelope: Record<string, unknown>;
      /**
       * The other members of `params` beside authoritative `arguments` (an `args` among
       * them), forwarded as sent; none where `arguments` is not authoritative: there they
       * are the arguments.
       */
      unknown: Record<string, unknown>;
      /** Whether the forwarded params differ from what the client sent. */
      changed: boolean;
      /** How `arguments` sent as JSON text wrote its values (json.ts). */
      exact?: ExactText;
    }
  /** Arguments that are no object: the caller answers `-32602` with `message`. */
  | { kind: "refused"; message: string; malformed: Malformed };

/**
 * What `message` tells the client, as codes for the log (docs/logs.md,
 * `tool_call_refused`): the member that is no object, and what it is (its
 * JSON type, or text that holds no JSON object, or nests too deep to read);
 * never its value.
 */
export interface Malformed {
  member: "arguments" | "args";
  malformed: JsonType | "text_not_json_object" | "text_nested_too_deep";
}

/** `member`'s `value`, which is no object: the refusal that says what it is instead. */
function notAnObject(member: Malformed["member"], value: unknown): Recovered {
  let said: string;
  let malformed: Malformed["malformed"];
  if (typeof value !== "string") {
    malformed = jsonTypeOf(value);
    said = malformed;
  } else if (isBlank(value)) {
    malformed = "text_not_json_object";
    said = "an empty string";
  } else if (nestsTooDeep(value)) {
    malformed = "text_nested_too_deep";
    said = `a JSON text nested deeper than ${MAX_NESTING} levels`;
  } else {
    malformed = "text_not_json_object";
    said = "a string that is not a JSON object";
  }
  return {
    kind: "refused",
    message: `\`${member}\` must be an object, not ${said}`,
    malformed: { member, malformed },
  };
}

/** Text that writes no JSON value: nothing, or JSON's whitespace alone. */
const isBlank = (text: string) => /^[\t\n\r ]*$/.test(text);

/**
 * `takesNone`: whether the tool takes a call with no arguments (its schema
 * accepts `{}`), for empty text in `arguments`; not given, it is refused.
 */
export function recoverArguments(
  params: Record<string, unknown>,
  takesNone?: () => boolean,
): Recovered {
  const given = Object.hasOwn(params, "arguments") ? params.arguments : undefined;
  /** The members of `params` that `kept` names, as `params` wrote them. */
  const membersOf = (kept: (key: string) => boolean) =>
    writtenAsIn(Object.fromEntries(Object.entries(params).filter(([key]) => kept(key))), params);

  let fromArguments: Record<string, unknown> | undefined;
  let exact: ExactText | undefined;
  if (isPlainObject(given)) {
    fromArguments = given;
  } else if (typeof given === "string" && !isBlank(given)) {
    const parsed = parseExact(given);
    fromArguments = isPlainObject(parsed?.value) ? parsed.value : undefined;
    exact = parsed?.exact;
    if (!fromArguments) return notAnObject("arguments", given);
  } else if (given !== undefined && given !== null && typeof given !== "string") {
    return notAnObject("arguments", given);
  }

  if (fromArguments && Object.keys(fromArguments).length > 0) {
    const fromString = typeof given === "string";
    // Beside authoritative arguments an `args` is one more member the proxy does not read.
    const request = (key: string) => key === "name" || REQUEST_KEYS.has(key);
    return {
      kind: "recovered",
      recovery: fromString ? "json_string" : "as_sent",
      arguments: fromArguments,
      envelope: membersOf(request),
      unknown: membersOf((key) => key !== "arguments" && !request(key)),
      changed: fromString,
      ...(exact ? { exact } : {}),
    };
  }

  // Not authoritative: what is inline, or else `args`, is the arguments, and no member is unknown.
  const envelope = membersOf((key) => ENVELOPE_KEYS.has(key) && key !== "arguments");
  const result = (
    recovery: RecoveryKind,
    args: Record<string, unknown> | undefined,
    changed: boolean,
    exact?: ExactText,
  ): Recovered => ({
    kind: "recovered",
    recovery,
    arguments: args,
    envelope,
    unknown: {},
    changed,
    ...(exact ? { exact } : {}),
  });
  const inline = membersOf((key) => !ENVELOPE_KEYS.has(key));
  if (Object.keys(inline).length > 0) return result("inline", inline, true);

  const args = Object.hasOwn(params, "args") ? params.args : undefined;
  // JSON text of an object, as `arguments` may be: models that write one write the other so.
  const text = typeof args === "string" ? parseExact(args) : undefined;
  const fromArgs = isPlainObject(args) ? args : isPlainObject(text?.value) ? text.value : undefined;
  if (fromArgs) {
    delete envelope.args;
    return result("args", fromArgs, true, text?.exact);
  }
  if (args !== undefined && args !== null) return notAnObject("args", args);
  if (given === undefined) return result("empty", undefined, false);
  if (typeof given === "string" && isBlank(given) && !takesNone?.()) {
    return notAnObject("arguments", given);
  }
  // `null`, `""` and `"{}"` become `{}`; `{}` stays as it was.
  return result("empty", {}, given === null || typeof given === "string");
}
