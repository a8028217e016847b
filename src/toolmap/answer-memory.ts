/**
 * The last listing answer rewritten per origin and profile
 * (rewrite/remembered-answer.ts reuses it for the same text, id aside): in
 * isolate memory (isolate-memory.ts), and in KV for new isolates under the
 * same deployment and settings (stored-map.ts, `v2:<origin>:answer:<settings>`;
 * docs/tool-map.md, "Remembered answers").
 */
import type { BoundedMap } from "../bounded-map";
import { logEvent } from "../log";
import { fingerprint32 } from "../names/stable-hash";
import type { ToolPolicy } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import type { ProfileNames } from "./profile-names";
import {
  ANSWER_TTL_DAYS,
  type AnswerBytes,
  answerBytes,
  decodeAnswer,
  encodeAnswer,
  type RememberedAnswer,
} from "./stored-map";

/** The largest value KV takes: an answer's UTF-8 text past it stays in the isolate. */
const MAX_KV_VALUE_BYTES = 25 * 1024 * 1024;
const ANSWER_WRITE_MS = 60_000;

/**
 * What a rewritten listing depends on besides the origin's text: the code (a
 * deployment's version id) and the settings that shape it, as one fingerprint.
 */
export function settingsOf(deployment: string, profile: Profile, policy: ToolPolicy): string {
  const { names, toolCeiling } = profile;
  const settings = [deployment, profile.name, names.cap, toolCeiling, policy.changes];
  // Added only where it is not the default, so that the default's answers keep their key.
  if (policy.scope === "schema") settings.push(policy.scope);
  return fingerprint32(JSON.stringify([...settings, policy.rules.document])).toString(36);
}

const sameAnswer = (a: RememberedAnswer, b: RememberedAnswer) =>
  a.received.every((part, i) => part === b.received[i]) &&
  a.sent.every((part, i) => part === b.sent[i]);

export class AnswerMemory {
  /**
   * This request's read of the answer KV holds, while the isolate knows none. A request never
   * waits for another's read: when its client leaves, the runtime cancels the request, and a read
   * it had under way never settles (test/worker/held-reads.test.ts).
   */
  #read: Promise<RememberedAnswer | undefined> | undefined;

  constructor(
    private readonly kv: KVNamespace,
    private readonly answers: BoundedMap<ProfileNames, RememberedAnswer>,
    /** This profile's names, looked up each time: the origin's memory may drop them. */
    private readonly names: () => ProfileNames,
    private readonly waitUntil: (promise: Promise<unknown>) => void,
    /**
     * Where KV keeps the answer, worked out when asked (the rules are written out to fingerprint
     * them); `undefined` where KV keeps none (no deployment id; `TOOL_CHANGES=hold`, tool-map.ts).
     */
    private readonly key: () => string | undefined,
  ) {}

  /** The answer last rewritten: this isolate's, or the one KV holds (read once per isolate). */
  async remembered(): Promise<RememberedAnswer | undefined> {
    let names = this.names();
    const remembered = this.answers.get(names);
    if (remembered) return remembered;
    if (names.storedAnswer === undefined) {
      this.#read ??= names.answerReads.read(
        () => this.names().storedAnswer !== undefined,
        () => this.read(),
      );
      const answer = await this.#read;
      // Done: profiles the isolate lets go of later (`OriginMemory.clear`) read it anew.
      this.#read = undefined;
      names = this.names();
      // Another request's read may have come first, or its listing a newer answer.
      if (names.storedAnswer === undefined) {
        names.storedAnswer = { answer };
        if (answer && !this.answers.get(names)) this.answers.set(names, answer);
      }
    }
    return this.answers.get(names);
  }

  /**
   * The bytes of `answer`, the one this isolate remembers: made once, and kept
   * with it while they fit the isolate's bound (`undefined` when they do not,
   * and the body is compared as text).
   */
  bytes(answer: RememberedAnswer): AnswerBytes | undefined {
    if (answer.bytes) return answer.bytes;
    const bytes = answerBytes(answer);
    const names = this.names();
    // Only to the answer it was made from: another listing may have replaced it meanwhile.
    if (this.answers.get(names) !== answer) return bytes;
    return this.answers.replace(names, { ...answer, bytes }) ? bytes : undefined;
  }

  /** Remembers an answer in this isolate, and in KV for new isolates when KV holds another. */
  remember(answer: RememberedAnswer): void {
    const names = this.names();
    this.answers.set(names, answer);
    // At most one write a minute per isolate and profile: KV takes one a second per key.
    if (Date.now() - names.answerWrittenAt < ANSWER_WRITE_MS) return;
    const key = this.key();
    // An answer over the isolate's bound would be read back by new isolates only to be dropped.
    if (key === undefined || this.answers.get(names) !== answer) return;
    const known = names.storedAnswer?.answer;
    names.storedAnswer = { answer };
    names.answerWrittenAt = Date.now();
    this.waitUntil(
      (async () => {
        if (known && sameAnswer(known, answer)) return;
        // Encoded here, as KV would encode the text: its size in bytes is known before it is sent.
        const value = encodeAnswer(answer);
        if (value.byteLength > MAX_KV_VALUE_BYTES) return;
        await this.kv.put(key, value, { expirationTtl: ANSWER_TTL_DAYS * 86_400 });
      })().catch((error) =>
        logEvent("kv_error", { op: "put", what: "answer", error: String(error) }),
      ),
    );
  }

  /** Drops the answers of `profiles`: the map follows another listing now. */
  forget(profiles: Iterable<ProfileNames>): void {
    for (const names of profiles) this.answers.delete(names);
  }

  private async read(): Promise<RememberedAnswer | undefined> {
    const key = this.key();
    if (key === undefined) return undefined;
    try {
      const text = await this.kv.get(key, "text");
      return text === null ? undefined : decodeAnswer(text);
    } catch (error) {
      logEvent("kv_error", { op: "get", what: "answer", error: String(error) });
      return undefined;
    }
  }
}
