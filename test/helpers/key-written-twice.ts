/**
 * Whether a JSON text writes some key twice in one object, told apart from
 * src/'s own reading: its members, each `:` outside its strings, against
 * those its parse keeps.
 */
export function writesAKeyTwice(text: string): boolean {
  const membersOf = (value: unknown): number => {
    if (typeof value !== "object" || value === null) return 0;
    const inside = Object.values(value).reduce((n: number, item) => n + membersOf(item), 0);
    return inside + (Array.isArray(value) ? 0 : Object.keys(value).length);
  };
  const written = text.replace(/"(?:[^"\\]|\\.)*"/g, "").split(":").length - 1;
  return written !== membersOf(JSON.parse(text));
}
