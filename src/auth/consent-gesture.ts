/**
 * The consent page's one script: Allow answers only a gesture on the page
 * itself. Double-clickjacking (Paulos Yibelo, 2024): another site asks for a
 * double-click and, between its clicks, closes the window on top, so the
 * second click lands on Allow in the window behind it, where the proxy's
 * `/authorize` was opened for a client the attacker registered — possibly
 * long before. `frame-ancestors` cannot see it (nothing is framed), and a
 * delay after the page loaded cannot either.
 *
 * So Allow is `disabled` in the HTML, and the script turns it on once the
 * page is in front (visible and focused) and, since it came to front:
 *
 * - it has been there for half a second: a double-click's second click comes
 *   sooner (the platforms' default intervals: Windows 500 ms, GTK 400 ms), so
 *   a pointer already moving when the page was swapped under it allows
 *   nothing; browsers hold their own dialogs' buttons back after they show
 *   for the same reason;
 * - and the user made a gesture on it: a mouse or pen pointer moved 16 CSS
 *   pixels or more from where the page first saw it (a double-click's tremble
 *   stays within the 4–5 pixels the platforms allow it), or, once the half
 *   second is past, a key pressed (not one held since before) or a touch.
 *   Movement counts from the moment the page is in front, as a user's way
 *   to Allow does; a key or a tap is one act, and in the first half second
 *   it may be the second press the swap was made for.
 *
 * The page leaving the front (blur, hidden, left for the back-forward cache)
 * turns Allow off again, and all of it starts over. Only trusted events
 * count. Without JavaScript Allow stays off, and the page says so: a no-script
 * Allow would be one that takes the swapped click.
 */
/** The element the script turns on and off: the consent page's Allow. */
export const ALLOW_ID = "allow";

/**
 * The script, exactly as the page carries it: its SHA-256 is what the
 * page's Content-Security-Policy allows, and nothing else runs.
 */
export const ALLOW_SCRIPT = `(() => {
  const allow = document.getElementById("${ALLOW_ID}");
  let front = false, ready = false, gesture = false, from = null, timer = 0;
  const show = () => { allow.disabled = !(ready && gesture); };
  const arrive = () => {
    if (front || document.visibilityState !== "visible" || !document.hasFocus()) return;
    front = true;
    timer = setTimeout(() => { ready = true; show(); }, 500);
  };
  const leave = () => {
    clearTimeout(timer);
    front = ready = gesture = false;
    from = null;
    show();
  };
  const saw = (counts) => { if (counts) { gesture = true; show(); } };
  addEventListener("pointermove", (e) => {
    if (!e.isTrusted || !front || e.pointerType === "touch") return;
    from = from || [e.clientX, e.clientY];
    saw(Math.hypot(e.clientX - from[0], e.clientY - from[1]) >= 16);
  }, true);
  addEventListener("keydown", (e) => saw(e.isTrusted && ready && !e.repeat), true);
  addEventListener("pointerdown", (e) => saw(e.isTrusted && ready && e.pointerType !== "mouse"), true);
  addEventListener("focus", arrive);
  addEventListener("pageshow", arrive);
  addEventListener("blur", leave);
  addEventListener("pagehide", leave);
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" ? arrive() : leave());
  arrive();
})();`;

/**
 * `'sha256-…'`, the script's CSP source expression (standard base64, as
 * every browser compares it): written here, not digested per isolate, and
 * held to the script by test/unit/consent-page.test.ts.
 */
export const ALLOW_SCRIPT_SOURCE = "'sha256-m8S7wiuhfu7i2ZuHBmlLOQjpAA6mNW7GnOn70ooGsUM='";
