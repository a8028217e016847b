/**
 * workerd's `crypto.subtle.timingSafeEqual` (a Cloudflare extension), which
 * compares two buffers natively; Node has the same in `node:crypto` only. The
 * core section installs it while it measures, so that comparing a body with
 * a remembered answer (src/rewrite/remembered-answer.ts) costs what it does in
 * workerd rather than the JavaScript loop the proxy falls back to elsewhere.
 */
import { timingSafeEqual } from "node:crypto";

type Compare = (a: Uint8Array, b: Uint8Array) => boolean;

/** Installs it; returns what takes it away again. */
export function compareNatively(): () => void {
  const subtle = crypto.subtle as unknown as { timingSafeEqual?: Compare };
  const own = subtle.timingSafeEqual;
  subtle.timingSafeEqual = (a, b) => timingSafeEqual(a, b);
  return () => {
    if (own === undefined) delete subtle.timingSafeEqual;
    else subtle.timingSafeEqual = own;
  };
}
