/**
 * JSON text as a peer may write it, for generated inputs: an object is its
 * list of members, so a key may be written twice, in any spelling
 * (`"na\u006de"`), and a value may be any lexeme (`1e400`, `-0`, `"\ud800"`),
 * written as given (`Lexeme`).
 */

/** A value written as `text`, and what `JSON.parse` reads it as. */
export class Lexeme {
  constructor(
    readonly text: string,
    readonly value: unknown,
  ) {}
}

/** An object as written: its members in order, a key as a `Lexeme` where it is spelled otherwise. */
export class Members {
  constructor(readonly members: ReadonlyArray<readonly [string | Lexeme, unknown]>) {}
}

export function written(value: unknown): string {
  if (value instanceof Lexeme) return value.text;
  if (value instanceof Members) {
    const members = value.members.map(
      ([key, member]) =>
        `${key instanceof Lexeme ? key.text : JSON.stringify(key)}:${written(member)}`,
    );
    return `{${members.join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(written).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return written(new Members(Object.entries(value)));
  }
  return JSON.stringify(value) ?? "null";
}

/** The keys of `value` as a reader reads them, each object's in order, at any depth. */
export function* objectsKeys(value: unknown): Generator<string[]> {
  if (value instanceof Members) {
    yield value.members.map(([key]) => (key instanceof Lexeme ? String(key.value) : key));
    for (const [, member] of value.members) yield* objectsKeys(member);
  } else if (Array.isArray(value)) {
    for (const element of value) yield* objectsKeys(element);
  } else if (value !== null && typeof value === "object" && !(value instanceof Lexeme)) {
    yield* objectsKeys(new Members(Object.entries(value)));
  }
}
