/**
 * A text's first characters, cut between characters: a bound in UTF-16
 * units can fall inside a character written as two (an emoji), and its
 * first half alone is no character. Quoted back to a client, it is text a
 * strict decoder refuses (a Python client cannot encode it again as UTF-8),
 * and a model's request carries it.
 */

/** `text`'s first `max` UTF-16 units, or `max - 1` where the last would be half a character. */
export function cutBetweenCharacters(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** `text`, at most `max` UTF-16 units: where it is longer, its first `max - 1` or so and `…`. */
export const cutMarked = (text: string, max: number) =>
  text.length <= max ? text : `${cutBetweenCharacters(text, max - 1)}…`;
