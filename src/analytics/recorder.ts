/**
 * Call analytics for one request (docs/observability.md): its records, settled
 * as their answers are known, each written as one data point to the `CALLS`
 * dataset as it settles. `writeDataPoint` returns at once and never delays
 * an answer; a write that throws leaves the call as it was, and is logged
 * (`analytics_failed`) at most once a minute per isolate.
 *
 * Reading a call's answer is most of what analytics costs (CPU, not time:
 * docs/performance.md), so the answers of a share of requests are read
 * (`CALLS_ANSWER_SAMPLING_RATE`): the calls of any other are `unsampled`,
 * their answer passed as the origin's own stream, and a point read from a
 * sampled answer stands for 1 ÷ the rate of them (its weight). What is known
 * without reading (the proxy's own answers, an HTTP error, an origin that
 * failed) is known of every call, and stands for one.
 *
 * A task's end (task-memory.ts) is written where its creation was read: the
 * answer of a request of a task the caller's call created here is read
 * whatever this request's draw, and its point stands for as many calls as
 * the creation's did.
 */
import { logEvent } from "../log";
import type { ParsedBody } from "../transport/post-body";
import { endsTask } from "./answer-verdict";
import { CallAnswers } from "./call-answers";
import {
  localVerdict,
  type MessageRecord,
  UNANSWERED,
  UNREAD,
  UNSAMPLED,
  type Verdict,
} from "./call-record";
import { ClientMemory } from "./client-info";
import { bounded, dataPointOf, MAX_CLIENT_CHARS, type RequestFacts } from "./data-point";
import { tenantIndex } from "./layout";
import { TaskMemory } from "./task-memory";

/**
 * Analytics Engine takes 250 data points per invocation: a batch (of at most
 * 256 messages) writes its first 250. Its first 25 alone, the bound before
 * 2025, dropped what settled last: a JSON answer's calls settle before the
 * proxy's own answers, so a batch's refusals past them were never written.
 */
export const MAX_POINTS_PER_REQUEST = 250;
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** `analytics_failed`, at most once a minute per isolate, with the writes that failed since. */
export class FailureLog {
  #loggedAt = Number.NEGATIVE_INFINITY;
  #failed = 0;

  /** `now`: the clock, in ms (a test's own, where a minute cannot pass). */
  constructor(private readonly now: () => number = Date.now) {}

  failed(error: unknown): void {
    this.#failed++;
    const now = this.now();
    if (now - this.#loggedAt < FAILURE_LOG_INTERVAL_MS) return;
    logEvent("analytics_failed", {
      error: error instanceof Error ? error.message : String(error),
      failed: this.#failed,
    });
    this.#loggedAt = now;
    this.#failed = 0;
  }
}

/** What call analytics keeps in an isolate: the clients of 2025 sessions, the tasks calls created, and its failure log. */
export class AnalyticsMemory {
  readonly clients = new ClientMemory();
  readonly tasks = new TaskMemory();
  readonly failures = new FailureLog();
}

/** The bytes of an answer the proxy made itself, as `Response.json` writes it. */
const encoder = new TextEncoder();
const bytesOf = (answer: unknown) => encoder.encode(JSON.stringify(answer)).byteLength;
const contentLength = (response: Response) =>
  Number(response.headers.get("content-length") ?? 0) || 0;

export class CallRecorder {
  readonly answers: CallAnswers;
  /**
   * The messages the proxy answered itself: settled once the client's
   * response is known, which may be an HTTP error instead of those answers
   * (the origin's `401` to the listing the rules needed, a `502`).
   */
  readonly #local: MessageRecord[];
  /** The calls whose answers this request does not read: settled, as the local ones, by the response. */
  readonly #unsampled: MessageRecord[];
  #written = 0;

  constructor(
    private readonly dataset: AnalyticsEngineDataset,
    private readonly memory: AnalyticsMemory,
    private readonly facts: RequestFacts,
    records: readonly MessageRecord[],
    waitUntil: (promise: Promise<unknown>) => void,
    /** How many calls an outcome read from a call's answer stands for; 0: this request's are not read. */
    readWeight: number,
    /**
     * The caller's digest, sessions aside, where a message may create a task or ask of one; and
     * the source of their requests, whose share of the tasks remembered theirs are.
     */
    private readonly caller?: string,
    private readonly source?: string,
  ) {
    const unread = (record: MessageRecord) =>
      readWeight === 0 && record.method === "tools/call" && record.local === undefined;
    // A request of a task no call of the caller's created here has no point to write.
    const known = ({ taskId }: MessageRecord) =>
      taskId === undefined || (caller !== undefined && memory.tasks.has(caller, taskId));
    const kept = records.filter(known);
    this.answers = new CallAnswers(
      kept.filter((record) => !unread(record)),
      (record, verdict, bytes, read) =>
        this.#settle(
          record,
          verdict,
          bytes,
          read && record.method === "tools/call" ? readWeight : 1,
        ),
      waitUntil,
    );
    this.#local = kept.filter((record) => record.local !== undefined);
    this.#unsampled = kept.filter(unread);
  }

  /** The proxy calls the origin now. */
  callingOrigin(): void {
    this.facts.originStarted = Date.now();
  }

  /**
   * Every message ends as `verdict`, known without reading an answer:
   * `response` is what the client gets instead of their answers.
   */
  endWith(verdict: Verdict, response: Response): void {
    const bytes = contentLength(response);
    for (const record of [...this.#local.splice(0), ...this.#unsampled.splice(0)]) {
      this.#settle(record, verdict, bytes, 1);
    }
    this.answers.endAll(verdict, bytes, false);
  }

  /**
   * The client gets `response`: an HTTP error is what every message got;
   * else the proxy's own answers are in it, and, unless a watch reads it as
   * it streams (and settles what waits when it ends), what still waits is
   * judged by its status: a `202` or `204` answers nothing, and any other is
   * `unread`, or `unsampled` where no answer was to be read.
   */
  answered(response: Response): void {
    const { status } = response;
    if (status >= 400) {
      this.endWith({ outcome: "http_error", errorType: String(status) }, response);
      return;
    }
    for (const record of this.#local.splice(0)) {
      this.#settle(record, localVerdict(record), bytesOf(record.local), 1);
    }
    const bytes = contentLength(response);
    const empty = status === 202 || status === 204;
    for (const record of this.#unsampled.splice(0)) {
      this.#settle(record, empty ? UNANSWERED : UNSAMPLED, bytes, empty ? 1 : 0);
    }
    if (this.answers.streaming || !this.answers.waiting) return;
    if (empty) this.answers.endAll(UNANSWERED, bytes, false);
    else this.answers.endAll(UNREAD, bytes);
  }

  #settle(record: MessageRecord, verdict: Verdict, answerBytes: number, weight: number) {
    if (record.settled) return;
    if (record.taskId !== undefined) {
      // Written only as the task's end, for the call that created it.
      const task = this.#taskEnded(record.taskId, verdict);
      if (!task) return;
      record.report = task.report;
      record.search = task.search;
      record.taskCreated = task.created;
      weight = task.weight;
    }
    const { taskId, ...outcome } = verdict;
    const at = Date.now();
    record.settled = { ...outcome, at, answerBytes, weight };
    if (taskId !== undefined && this.caller !== undefined && weight > 0) {
      const { report = { repairs: {} }, search } = record;
      const task = { report, search, weight, created: at };
      this.memory.tasks.remember(this.caller, taskId, task, this.source);
    }
    if (this.#written >= MAX_POINTS_PER_REQUEST) return;
    this.#written++;
    try {
      this.dataset.writeDataPoint(dataPointOf(record, this.facts));
    } catch (error) {
      this.memory.failures.failed(error);
    }
  }

  /** The caller's task `taskId`, taken from memory, when `verdict` is its end (written once). */
  #taskEnded(taskId: string, verdict: Verdict) {
    if (!endsTask(verdict) || this.caller === undefined) return undefined;
    return this.memory.tasks.take(this.caller, taskId);
  }
}

/**
 * The recorder of a request whose `records` planForward made, when the
 * `CALLS` dataset is bound and there is one; `started`: when it arrived;
 * `caller`, its caller's digest sessions aside, made only for a request that
 * may create a task or asks of one, or names no client of its own in a
 * session whose `initialize` the isolate may remember (client-info.ts).
 */
export async function recordCalls(
  /** The `CALLS` dataset, `CALLS_ANSWER_SAMPLING_RATE` and `WRANGLER_ENV` (config's `CallsSettings`). */
  calls:
    | { dataset: AnalyticsEngineDataset; answerSamplingRate: number; environment: string }
    | undefined,
  memory: AnalyticsMemory,
  request: {
    profile: string;
    body: ParsedBody;
    headers: Headers;
    started: number;
    waitUntil: (promise: Promise<unknown>) => void;
    caller: () => Promise<string>;
    /** The caller's source (toolmap/callers.ts `Caller.source`). */
    source: () => Promise<string | undefined>;
  },
  records: readonly MessageRecord[] | undefined,
): Promise<CallRecorder | undefined> {
  if (!calls || !records?.length) return undefined;
  const { body, headers } = request;
  const rate = calls.answerSamplingRate;
  const tasks = records.some((record) => record.mayCreateTask || record.taskId !== undefined);
  return new CallRecorder(
    calls.dataset,
    memory,
    {
      index: tenantIndex(calls.environment),
      profile: request.profile,
      client: await memory.clients.clientOf(body.messages, headers, request.caller),
      revision: body.revision.version,
      requestId: bounded(headers.get("cf-ray") ?? "", MAX_CLIENT_CHARS),
      requestBytes: body.bytes.byteLength,
      started: request.started,
      originStarted: undefined,
    },
    records,
    request.waitUntil,
    // The rate's share of requests, at random: as much of each client's and each tool's.
    Math.random() < rate ? 1 / rate : 0,
    tasks ? await request.caller() : undefined,
    tasks ? await request.source() : undefined,
  );
}
