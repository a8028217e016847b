/**
 * The gateway's scripted origin (test/fixtures/node/scripted-origin.ts), as
 * a test in workerd drives it: a script registered, the `ORIGIN_URL` that
 * answers it, and what reached the origin.
 */
import { GATEWAY_ORIGIN } from "./proxy";

/** An answer as the fixture's `ScriptedAnswer` has it, its body as bytes or text. */
export interface ScriptedAnswer {
  informational?: readonly string[];
  status: number;
  reason?: string;
  headers: [string, string][];
  /** Bytes or text (as UTF-8). */
  body: Uint8Array | string;
  gzip?: boolean;
  framing?: "length" | "chunked" | "close";
  /** Where the body is cut into writes a moment apart. */
  cuts?: number[];
  /** An HTTP/1.0 answer: no `Connection: close` line. */
  http10?: boolean;
}

export interface ScriptedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const base64 = (body: Uint8Array | string) => {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
};

/** Registers `answers` as the script of `key`, in place of any before. */
async function register(
  key: string,
  answers: Record<string, ScriptedAnswer>,
  idMark?: string,
  accepted?: ScriptedAnswer,
) {
  const script = {
    answers: Object.fromEntries(
      Object.entries(answers).map(([method, answer]) => [
        method,
        { ...answer, body: base64(answer.body) },
      ]),
    ),
    idMark,
    accepted: accepted && { ...accepted, body: base64(accepted.body) },
  };
  const registered = await fetch(`${GATEWAY_ORIGIN}/__script?key=${key}`, {
    method: "POST",
    body: JSON.stringify(script),
  });
  await registered.body?.cancel();
}

/**
 * An origin that answers `answers` (by the method of a request's lone
 * message, `*` for any other; see the fixture), with `idMark` in a body
 * replaced by the id of the request it answers; `received()`, what reached
 * it since the last look; `change(answers)`, the same origin (its URL, so its
 * tool map) answering others from then on.
 */
export async function scriptedOrigin(
  answers: Record<string, ScriptedAnswer>,
  idMark?: string,
  /** The answer to notifications and responses alone (the fixture's `Script.accepted`). */
  accepted?: ScriptedAnswer,
): Promise<{
  originUrl: string;
  received(): Promise<ScriptedRequest[]>;
  change(answers: Record<string, ScriptedAnswer>): Promise<void>;
}> {
  const key = crypto.randomUUID();
  await register(key, answers, idMark, accepted);
  return {
    originUrl: `${GATEWAY_ORIGIN}/scripted/mcp?script=${key}`,
    received: async () => (await fetch(`${GATEWAY_ORIGIN}/__script?key=${key}`)).json(),
    change: (changed) => register(key, changed, idMark, accepted),
  };
}
