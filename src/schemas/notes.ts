/** Constraints a view cannot keep, said in words in a schema's `description`. Pure. */

/** `description` with `note` after it, as a sentence of its own. */
export function noteOn(description: unknown, note: string): string {
  if (typeof description !== "string" || description.trim() === "") return note;
  const text = description.trimEnd();
  return /[.!?:;]$/.test(text) ? `${text} ${note}` : `${text}. ${note}`;
}

/** A value as it appears in a note or a string enum: JSON text, as the schema wrote it. */
export function describeValue(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
