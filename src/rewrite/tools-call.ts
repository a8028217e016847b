/**
 * One `tools/call`, client → origin (docs/arguments.md): the original name
 * restored, the arguments recovered from wherever the client put them, then,
 * for a tool whose schema the map knows, values its schema view asked for as
 * JSON text parsed back (schemas/way-back.ts), keys coalesced, values coerced
 * and the result validated against the origin's own schema. A tool the map
 * does not know gets envelope recovery only: nothing is guessed without its
 * schema.
 *
 * The outcome is either a message to forward or an answer the proxy gives
 * itself: a refusal (call-refusal.ts) of arguments that are no object, or of a
 * call the operator's rules refuse (docs/rules.md), or, under
 * `ARGUMENT_VALIDATION=enforce`, a tool result with `isError: true` saying
 * what to fix. One `tool_call_repaired` line is logged for every call whose
 * arguments the proxy changed or found invalid; it carries keys and types,
 * never values.
 */
import type { CallReport, Repairs } from "../analytics/call-record";
import { describeInvalidCall } from "../args/fix-it-text";
import { recoverArguments } from "../args/recover";
import { repairArguments } from "../args/repair";
import {
  missingKey,
  type Validation,
  type ValidationIssue,
  validateArguments,
} from "../args/validate";
import type { ValidationMode } from "../config";
import {
  type ExactText,
  isPlainObject,
  keyFoldedTwice,
  keyTwiceReason,
  markMadeFrom,
  placesOnly,
  sameJson,
  writtenAsIn,
} from "../json";
import { logEvent } from "../log";
import { type JsonRpcRequest, toolError } from "../protocol/jsonrpc";
import { type CallHeaders, headersUnder, paramHeaders } from "../protocol/mcp-headers";
import type { Revision } from "../protocol/revision";
import { aliasedArguments, replacesArgument, settledArguments } from "../rules/apply-rules";
import type { ToolRule } from "../rules/tool-rules";
import { keysBack, valuesFromText } from "../schemas/way-back";
import type { ToolResolver } from "../toolmap/resolve-tool";
import {
  CALL_LINE,
  PROTOCOL_ERROR,
  REFUSALS,
  type RefusedAs,
  refusal,
  UNKNOWN,
} from "./call-refusal";

export type CallOutcome = (
  | {
      kind: "forward";
      message: JsonRpcRequest;
      /** The 2026-07-28 headers the forwarded call implies; none for a call without a name. */
      headers?: CallHeaders;
      /** How the JSON texts read on the way (arguments as text, values a view asked for as text) wrote their values. */
      exact?: ExactText;
    }
  | { kind: "answer"; response: unknown }
) & {
  /** What the proxy made of the call, for call analytics: names, kinds and counts only. */
  report: CallReport;
};

/** An issue as its line writes it: no message (which may quote a value), the key a `required` misses. */
function loggedIssue(issue: ValidationIssue) {
  const missing = missingKey(issue);
  const { location, keyword } = issue;
  return missing === undefined ? { location, keyword } : { location, keyword, missing };
}

/** Each kind of repair a call got, and how many (analytics/call-record.ts). */
function repairsOf(parts: {
  recovery: string | undefined;
  aliased: number;
  coalesced: number;
  coerced: number;
  enumCased: number;
  dropped: number;
  fromText: number;
  strictUndone: number;
  fixed: number;
  defaulted: number;
}): Repairs {
  const repairs: Repairs = {};
  if (parts.recovery !== undefined) {
    repairs[`recovered_${parts.recovery}` as keyof Repairs] = 1;
  }
  const counts: Array<[keyof Repairs, number]> = [
    ["aliased", parts.aliased],
    ["coalesced", parts.coalesced],
    ["coerced", parts.coerced],
    ["enum_cased", parts.enumCased],
    ["dropped", parts.dropped],
    ["from_text", parts.fromText],
    ["strict_undone", parts.strictUndone],
    ["fixed", parts.fixed],
    ["defaulted", parts.defaulted],
  ];
  for (const [kind, count] of counts) if (count > 0) repairs[kind] = count;
  return repairs;
}

/**
 * The params to forward, in the order the client wrote them: the envelope and
 * the members beside authoritative arguments as they came (args/recover.ts),
 * the original name, the recovered arguments in place of the sent ones (or
 * last, where they were inline or in `args`).
 */
function forwardedParams(
  params: Record<string, unknown>,
  kept: Record<string, unknown>,
  name: string,
  args: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const entries: Array<[string, unknown]> = [];
  for (const key of Object.keys(params)) {
    if (key === "name") entries.push([key, name]);
    else if (key === "arguments") {
      if (args !== undefined) entries.push([key, args]);
    } else if (Object.hasOwn(kept, key)) entries.push([key, kept[key]]);
  }
  if (args !== undefined && !Object.hasOwn(params, "arguments")) entries.push(["arguments", args]);
  // fromEntries: a key named `__proto__` stays an ordinary key.
  return writtenAsIn(Object.fromEntries(entries), params);
}

/**
 * The 2026-07-28 headers of the forwarded call: its tool's original name, and
 * the `Mcp-Param-*` its arguments imply, those of the arguments the
 * operator's rules fix the proxy's to write whatever the client sent.
 */
function callHeaders(
  tool: string,
  args: Record<string, unknown> | undefined,
  schema: unknown,
  rule: ToolRule | undefined,
): CallHeaders {
  if (schema === undefined) return { name: tool, params: undefined };
  const params = paramHeaders(args, schema);
  if (rule === undefined || Object.keys(rule.fixed).length === 0) return { name: tool, params };
  return { name: tool, params, setByRules: headersUnder(schema, replacesArgument(rule)) };
}

/** How every JSON text the call was read from wrote its values: the forwarded call writes them so. */
function exactOf(...texts: Array<ExactText | undefined>): { exact?: ExactText } {
  const exact = placesOnly(...texts);
  return exact ? { exact } : {};
}

export async function repairToolCall(
  message: JsonRpcRequest,
  resolveTool: ToolResolver,
  mode: ValidationMode,
  revision: Revision,
  /** How the body the call came in wrote its values (json.ts): a number's text for a string. */
  read?: ExactText,
  /** What its refusals are answered with: `call_tool`'s tool error for the call it carries. */
  refusedAs: RefusedAs = PROTOCOL_ERROR,
): Promise<CallOutcome> {
  const params = message.params;
  const name = isPlainObject(params) ? params.name : undefined;
  if (!isPlainObject(params) || typeof name !== "string") {
    if (!resolveTool.refusesCalls) return { kind: "forward", message, report: { repairs: {} } };
    // No name the rules can judge, while an origin may still read one (`tools[["admin"]]` is
    // `tools.admin` to JavaScript): refused, where the rules refuse calls.
    return refusal(
      message,
      {},
      "unnamed",
      "Invalid params: a tools/call names its tool in params.name, a string",
      refusedAs,
    );
  }

  const lookup = await resolveTool(name, message);
  const resolved = lookup.kind === "resolved" ? lookup.tool : undefined;
  const tool = resolved?.entry.original ?? name;
  const resolution = resolved ? resolved.by : "unknown";
  // A name no tool of the caller's whole listing answers to, and none handed out: did-you-mean.
  const unknown = lookup.kind === "unknown" && lookup.closest !== undefined ? "unknown" : undefined;
  const refused =
    (resolved ? resolved.refused : await resolveTool.refusalOf(name, message)) ?? unknown;
  if (refused) {
    const closest = UNKNOWN.has(refused) ? await resolveTool.closest(name) : undefined;
    const text = REFUSALS[refused](name, closest);
    // A name no tool of theirs answers to may be one an older listing showed them.
    const handedOutFor = resolved ? undefined : resolveTool.handedOutFor(name);
    return refusal(message, { tool, name }, refused, text, refusedAs, resolution, {
      closest,
      handedOutFor,
    });
  }
  const schema = resolved?.entry.inputSchema;
  // The operator's rule, if any: its aliases before the schema's coalescing, its values after repair.
  // A name the map does not know goes to the origin as it came: the rule for that original holds there.
  const rule = resolved ? resolved.rule : resolveTool.ruleOf(name);
  // Empty text for `arguments` is none where the tool takes a call without any (as the rule's
  // values complete it: a view hides what the rule fixes); unknown, it is not guessed.
  const recovered = recoverArguments(
    params,
    () =>
      schema !== undefined &&
      validateArguments(settledArguments({}, rule).arguments, schema).kind === "valid",
  );
  if (recovered.kind === "refused") {
    return refusal(
      message,
      { tool, name },
      "malformed_arguments",
      `Invalid params: ${recovered.message}`,
      refusedAs,
      resolution,
      { malformed: recovered.malformed },
    );
  }
  // What the model answered is read the way its view asked, then repaired against the origin's schema.
  const fromText =
    resolved?.view && recovered.arguments !== undefined
      ? valuesFromText(recovered.arguments, resolved.view, schema)
      : undefined;
  const given = fromText?.arguments ?? recovered.arguments;
  const aliased = rule && given ? aliasedArguments(given, rule) : undefined;
  const sent = aliased?.arguments ?? given;
  const repair =
    schema !== undefined && sent !== undefined
      ? repairArguments(sent, schema, placesOnly(read, recovered.exact, fromText?.exact))
      : undefined;
  const settled = rule ? settledArguments(repair?.arguments ?? sent ?? {}, rule) : undefined;
  const args = settled?.set.length ? settled.arguments : (repair?.arguments ?? sent);
  const repaired = recovered.changed || args !== recovered.arguments;
  // Arguments as the body wrote them were read one way (transport/post-body.ts); recovered or
  // coalesced ones are checked again, or the origin could read another key than the proxy checked.
  const twice = repaired ? keyFoldedTwice(args) : undefined;
  if (twice !== undefined) {
    return refusal(
      message,
      { tool, name },
      "ambiguous_arguments",
      `Invalid params: the arguments write ${keyTwiceReason(twice)}`,
      refusedAs,
      resolution,
    );
  }
  if (!resolved) {
    // Past every refusal, so the line is of a call that goes on: a name the map does not know
    // reaches the origin as called, which may have the tool (one listed since the map was
    // written, another caller's, its own name from a client not listed here) and answer it well.
    // `forwarded` says so on the line: read alone, "unknown" read as a failure. Where the proxy
    // handed the name out for a tool the caller's listing no longer shows (renamed or removed
    // since the listing the model called from, or another caller's), `handedOutFor` names it.
    // `relisted`: whether the name was looked for in a listing read from the origin for this request;
    // not where one of the last minute stood in, the limit allowed none, or the read failed.
    const handedOutFor = resolveTool.handedOutFor(name);
    logEvent("tool_unknown", {
      name,
      ...(handedOutFor === undefined ? {} : { handedOutFor }),
      relisted: resolveTool.relisted(),
      forwarded: "as_called",
    });
  }
  const validation: Validation =
    mode === "off" || schema === undefined
      ? { kind: "skipped", reason: mode === "off" ? "off" : "unknown tool" }
      : validateArguments(args ?? {}, schema);

  const renamed = tool !== name;
  const changed = renamed || repaired;
  // The fix-it text names the tool's arguments: only for a caller whose own listing showed it.
  const fixIt = mode === "enforce" && validation.kind === "invalid" && resolved?.shown === true;
  // A restored name alone is routine (the listing logged the rename): no line per call, nor for
  // keys the view renamed written back alone (passes/property-keys.ts). A name read by another
  // spelling is not.
  const respelled = resolved !== undefined && resolved.by !== "listed";
  const keysBackOnly = () =>
    !recovered.changed &&
    recovered.arguments !== undefined &&
    resolved?.view?.keys !== undefined &&
    sameJson(args, keysBack(recovered.arguments, resolved.view));
  if ((repaired && !keysBackOnly()) || respelled || validation.kind === "invalid") {
    logEvent("tool_call_repaired", {
      ...CALL_LINE,
      "gen_ai.tool.name": tool,
      name,
      renamed,
      ...(respelled ? { nameRead: resolved.by } : {}),
      source: resolved?.source ?? "unknown",
      recovery: recovered.recovery,
      renamedKeys: [...(aliased?.renamed ?? []), ...(repair?.report.renamedKeys ?? [])],
      ...(settled?.set.length ? { setByRules: settled.set } : {}),
      coercions: [...(fromText?.parsed ?? []), ...(repair?.report.coercions ?? [])],
      ...(repair?.report.enumCased.length ? { enumCased: repair.report.enumCased } : {}),
      dropped: [
        ...(fromText?.leftOut ?? []),
        ...(repair?.report.dropped ?? []),
        ...(settled?.dropped ?? []),
      ],
      ...(repair?.report.limited ? { limited: true } : {}),
      validation: validation.kind,
      ...(validation.kind === "invalid" ? { issues: validation.issues.map(loggedIssue) } : {}),
      // Answered here, as its data point's outcome says: the same line under `warn` is a call
      // the origin answered.
      ...(fixIt ? { outcome: "invalid_arguments" } : {}),
    });
  }

  const fixed = settled?.set.filter((key) => Object.hasOwn(rule?.fixed ?? {}, key)).length ?? 0;
  const report: CallReport = {
    tool,
    resolution,
    validation: validation.kind,
    repairs: repairsOf({
      recovery: recovered.changed ? recovered.recovery : undefined,
      aliased: aliased?.renamed.length ?? 0,
      coalesced: repair?.report.renamedKeys.length ?? 0,
      coerced: repair?.report.coercions.length ?? 0,
      enumCased: repair?.report.enumCased.length ?? 0,
      dropped: (repair?.report.dropped.length ?? 0) + (settled?.dropped.length ?? 0),
      fromText: fromText?.parsed.length ?? 0,
      strictUndone: fromText?.leftOut.length ?? 0,
      fixed,
      defaulted: (settled?.set.length ?? 0) - fixed,
    }),
  };

  if (fixIt && validation.kind === "invalid") {
    const unshown = new Set(Object.keys(rule?.fixed ?? {}));
    // Named as the caller's view named them (passes/property-keys.ts), not as the origin does.
    const shownAs = new Map([...(resolved?.view?.keys ?? [])].map(([shown, key]) => [key, shown]));
    // The tool too, by the name the model is to call it again by.
    const text = describeInvalidCall(
      resolved.name,
      args ?? {},
      schema,
      validation.issues,
      unshown,
      shownAs,
    );
    return { kind: "answer", response: toolError(message.id, text, revision), report };
  }

  const forwarded: JsonRpcRequest = changed
    ? markMadeFrom(
        writtenAsIn(
          {
            ...message,
            params: forwardedParams(
              params,
              { ...recovered.envelope, ...recovered.unknown },
              tool,
              args,
            ),
          },
          message,
        ),
        message,
      )
    : message;
  return {
    kind: "forward",
    message: forwarded,
    headers: callHeaders(tool, args, schema, rule),
    ...exactOf(recovered.exact, fromText?.exact, repair?.exact),
    report,
  };
}
