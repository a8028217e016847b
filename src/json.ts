/**
 * JSON values as the proxy reads them. Everything it parses comes from a peer
 * and is untrusted: property reads are own-property reads (a key named
 * `constructor` or `__proto__` is data, never the prototype's), and a parse
 * that fails is an answer (`undefined`; JSON never parses to it), not a throw.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `object[key]` when it is the object's own property; `undefined` otherwise. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** The value `text` holds, or `undefined` when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The value UTF-8 `bytes` hold, or `undefined` when they are not UTF-8 JSON. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
  return parseJson(text);
}

/** The object `text` holds, or `undefined` when it holds no JSON object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return isPlainObject(value) ? value : undefined;
}
