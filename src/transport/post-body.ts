/**
 * Reads and classifies a POST body before anything reaches the origin.
 *
 * The body is read up to `maxBytes` and no further: a declared `Content-Length`
 * over the limit is refused unread, and a streamed body is cancelled the moment
 * it passes the limit, so an oversized upload costs neither memory nor CPU time.
 * The bytes are kept as they came; they are what gets forwarded when nothing is
 * rewritten.
 */
import * as v from "valibot";
import {
  type ErrorAddressee,
  ErrorCode,
  isRequest,
  type JsonRpcMessage,
  JsonRpcMessageSchema,
} from "../jsonrpc";
import { readBounded } from "./read-bounded";

export type PostBody =
  | { ok: true; bytes: Uint8Array; messages: JsonRpcMessage[]; batch: boolean }
  | { ok: false; status: 400 | 413; code: number; message: string };

async function readWithin(request: Request, maxBytes: number): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) return null;
  if (!request.body) return new Uint8Array();
  const read = await readBounded(request.body, maxBytes);
  if (read.complete) return read.bytes;
  await read.rest.cancel();
  return null;
}

function parseJson(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return {
      ok: true,
      value: JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)),
    };
  } catch {
    return { ok: false };
  }
}

const invalid = (status: 400 | 413, code: number, message: string): PostBody => ({
  ok: false,
  status,
  code,
  message,
});

export async function readPostBody(request: Request, maxBytes: number): Promise<PostBody> {
  const bytes = await readWithin(request, maxBytes);
  if (bytes === null) {
    return invalid(
      413,
      ErrorCode.InvalidRequest,
      `Request body exceeds the limit of ${maxBytes} bytes`,
    );
  }
  const json = parseJson(bytes);
  if (!json.ok)
    return invalid(400, ErrorCode.ParseError, "Parse error: the body is not valid JSON");

  const batch = Array.isArray(json.value);
  const candidates: unknown[] = batch ? (json.value as unknown[]) : [json.value];
  if (candidates.length === 0) {
    return invalid(400, ErrorCode.InvalidRequest, "Invalid Request: empty batch");
  }
  const messages: JsonRpcMessage[] = [];
  for (const [index, candidate] of candidates.entries()) {
    const parsed = v.safeParse(JsonRpcMessageSchema, candidate);
    if (!parsed.success) {
      const where = batch ? `batch element ${index} is` : "the body is";
      return invalid(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: ${where} not a JSON-RPC 2.0 message`,
      );
    }
    messages.push(parsed.output);
  }
  return { ok: true, bytes, messages, batch };
}

/** The requests of a body, for addressing an error that stands in for the origin's answer. */
export function addresseeOf(body: { messages: JsonRpcMessage[]; batch: boolean }): ErrorAddressee {
  return { batch: body.batch, ids: body.messages.filter(isRequest).map((message) => message.id) };
}
