/** Constraints a view cannot keep, said in words in a schema's `description`. Pure. */
import { type ExactText, stringifyExact } from "../json";

/** `description` with `note` after it, as a sentence of its own. */
export function noteOn(description: unknown, note: string): string {
  if (typeof description !== "string" || description.trim() === "") return note;
  const text = description.trimEnd();
  return /[.!?:;]$/.test(text) ? `${text} ${note}` : `${text}. ${note}`;
}

/**
 * A value as it appears in a note or a string enum: JSON text, each number and string as
 * `exact` knows the schema wrote it (json.ts), else as `JSON.stringify` writes it.
 */
export function describeValue(value: unknown, exact?: ExactText): string {
  return stringifyExact(value, exact) ?? String(value);
}
