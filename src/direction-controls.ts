/**
 * Unicode's controls of text direction (bidi embeddings, overrides, isolates
 * and marks), in what a client or an origin wrote: U+202E turns what follows
 * it right to left ("\u202Eelpmaxe.live" reads "evil.example"), and the
 * words after it too, on a consent page (auth/consent-page.ts) or a
 * dashboard of call analytics (analytics/data-point.ts) alike. Pure.
 */
const DIRECTION_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `text` without direction controls. */
export const withoutDirectionControls = (text: string) => text.replace(DIRECTION_CONTROLS, "");
