/**
 * What a provider limits of a view (providers/openai-strict.ts,
 * `STRICT_LIMITS`): its property names and enum values. The walk counts them
 * as it makes the view (walk.ts), so that a view well within the limits, as
 * nearly every one is, is not read a second time to count them; reading it
 * again was a tenth of `openai-strict`'s views.
 *
 * The count is never below what the finished view holds (a property or enum
 * a pass leaves out after it was counted still counts), with two exceptions
 * the provider allows for: a `null` a property's enum gains when it is made
 * nullable, and what `uncounted` says the count does not follow. Then the
 * provider counts the view itself. schema-sizes.test.ts holds the count to
 * the view's own sizes.
 */

export class ViewSizes {
  properties = 0;
  enumValues = 0;
  /** Characters of property names and enum values, each value as `String` writes it. */
  characters = 0;
  /** The values of the longest enum. */
  longestEnum = 0;
  /**
   * Whether the view holds what this count does not follow: an enum value that is an object or
   * a list (whose keywords the provider's own count reads into), a property named `properties`
   * (read there as a map of properties), or a pass put one value in several places (uncount).
   */
  uncounted = false;

  /** A property of a map of `properties` the walk views. */
  property(name: string): void {
    this.properties++;
    this.characters += name.length;
    if (name === "properties") this.uncounted = true;
  }

  /** A node's `enum`, as it is once the passes that run before its children are done with it. */
  enum(values: readonly unknown[]): void {
    this.enumValues += values.length;
    if (values.length > this.longestEnum) this.longestEnum = values.length;
    for (const value of values) {
      if (typeof value === "string") this.characters += value.length;
      else if (typeof value !== "object" || value === null) this.characters += String(value).length;
      else this.uncounted = true;
    }
  }
}
