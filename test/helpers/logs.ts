/** The proxy's log lines (src/log.ts: one JSON object per line), as a test reads them. */
import { vi } from "vitest";
import { UNSEEN } from "../../src/log";

/** What a line may not hold raw (docs/logs.md): a C0 control, or a character of log.ts `UNSEEN`. */
const RAW = new RegExp(`[\\u0000-\\u001f${UNSEEN}]`, "u");

/**
 * What is wrong with `line` as docs/logs.md says lines are written: one JSON
 * object with its `event`, within 16 Ki characters, no control character raw,
 * no half of a character alone (written `\\ud83d`, a line strict JSON readers
 * refuse); `undefined` when nothing is.
 */
export function lineProblem(line: string): string | undefined {
  if (line.length > 16 * 1024) return `a line of ${line.length} characters`;
  if (RAW.test(line)) return "a control character raw";
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {}
  if (typeof (parsed as { event?: unknown } | null)?.event !== "string") {
    return "not one JSON object with its event";
  }
  return wellFormed(parsed) ? undefined : "half a character alone";
}

/** Whether every string of `value`, and every key, is well-formed. */
const wellFormed = (value: unknown): boolean =>
  typeof value === "string"
    ? value.isWellFormed()
    : typeof value !== "object" || value === null
      ? true
      : Object.entries(value).every(([key, item]) => key.isWellFormed() && wellFormed(item));

export interface LogLine {
  event: string;
  [field: string]: unknown;
}

/** Captures every log line from now on; `restore` stops it. */
export function captureLogs() {
  // A spy left in place by an earlier capture is the same spy: its calls so far are not "from now on".
  const spy = vi.spyOn(console, "log");
  spy.mockClear();
  const lines = (): LogLine[] =>
    spy.mock.calls.flatMap(([line]) => {
      try {
        return [JSON.parse(String(line)) as LogLine];
      } catch {
        return [];
      }
    });
  return {
    lines,
    /** What is wrong with the lines written (`lineProblem`), each line's problem with its start. */
    problems: () =>
      spy.mock.calls.flatMap(([line]) => {
        const problem = lineProblem(String(line));
        return problem === undefined
          ? []
          : [`${problem}: ${JSON.stringify(String(line).slice(0, 80))}`];
      }),
    /** The lines of one event. */
    events: (name: string) => lines().filter((line) => line.event === name),
    restore: () => spy.mockRestore(),
  };
}

/**
 * The pieces of `secret`, `length` characters each, that `logged` quotes: a
 * message that quotes the first characters of an answer (V8's JSON.parse
 * quotes ten) leaks a token's part, not the whole of it.
 */
export function piecesQuoted(logged: string, secret: string, length = 8): string[] {
  const pieces: string[] = [];
  for (let at = 0; at + length <= secret.length; at++) {
    const piece = secret.slice(at, at + length);
    if (logged.includes(piece)) pieces.push(piece);
  }
  return pieces;
}
