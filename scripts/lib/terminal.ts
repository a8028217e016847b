/**
 * What an origin or a client wrote, as the npm scripts print it to the
 * operator's terminal: tool names and descriptions, client names. A control
 * character there would reach the terminal as one, and an escape sequence can
 * rewrite what the screen shows, retitle the window or set the clipboard
 * (OSC 52).
 */
import { escapeRawControls, shownPlainly } from "../../src/log";

/** `text` with each control character (C0, DEL, C1) and each unseen one (log.ts `UNSEEN`) shown as `�`. */
export const printable = shownPlainly;

/**
 * `value` as JSON text, indented, with no control character left raw in a
 * string: it reads back as the same value.
 */
export const printableJson = (value: unknown) => escapeRawControls(JSON.stringify(value, null, 2));
