/** The proxy's log lines (src/log.ts: one JSON object per line), as a test reads them. */
import { vi } from "vitest";

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
