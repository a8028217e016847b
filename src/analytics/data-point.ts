/**
 * The data point written for one settled record, laid out as layout.ts says.
 *
 * Analytics Engine takes one index of at most 96 bytes, 20 blobs of at most
 * 16 KB together (5,120 bytes before June 2025) and 20 doubles: every blob
 * here is bounded, and all of them together stay under 5,120 bytes.
 */
import { withoutDirectionControls } from "../direction-controls";
import { shownPlainly } from "../log";
import { cutMarked } from "../text-cut";
import { type MessageRecord, repairCount, repairList } from "./call-record";
import { BLOBS, type BlobName, DOUBLES, type DoubleName } from "./layout";

/** A tool's name as the origin lists it: MCP asks for at most 128 characters. */
export const MAX_TOOL_CHARS = 256;
/** A client's name, version or request id, as it says them. */
export const MAX_CLIENT_CHARS = 64;

/** What one request's records share. */
export interface RequestFacts {
  index: string;
  profile: string;
  client: { name: string; version: string; source: string };
  revision: string;
  requestId: string;
  requestBytes: number;
  /** When the request arrived, and when the proxy called the origin (ms, the Workers clock). */
  started: number;
  originStarted: number | undefined;
}

/**
 * `text`, at most `max` characters, cut between characters, with no control
 * of text direction (left out, as the consent page does) and no other
 * character a terminal acts on or does not show (each shown as `�`, as
 * log.ts `shownPlainly` shows it: a control, a zero-width character, a line
 * separator, the BOM, a tag character): fields a client or an origin wrote
 * reach terminals and dashboards, where `Claude\u200B` would count apart
 * from a `Claude` that looks the same. A blob is no JSON: a `\u200b` escape,
 * as a log line writes it, would be six characters a client could write too.
 */
export function bounded(text: string, max: number): string {
  return cutMarked(shownPlainly(withoutDirectionControls(text)), max);
}

/** The data point of a settled record. */
export function dataPointOf(record: MessageRecord, facts: RequestFacts): AnalyticsEngineDataPoint {
  const settled = record.settled;
  if (!settled) throw new Error("a record is written once settled");
  const report = record.report;
  const repairs = report?.repairs ?? {};
  const blobs: Record<BlobName, string> = {
    "mcp.method.name": record.method,
    "gen_ai.tool.name": bounded(report?.tool ?? "", MAX_TOOL_CHARS),
    outcome: settled.outcome,
    "error.type": settled.errorType,
    profile: facts.profile,
    "mcp.client.name": facts.client.name,
    "mcp.client.version": facts.client.version,
    repairs: repairList(repairs),
    validation: report?.validation ?? "",
    resolution: report?.resolution ?? "",
    search: record.search ? "search" : "",
    refusal: report?.refused ?? "",
    "mcp.protocol.version": facts.revision,
    "client.source": facts.client.source,
    "request.id": facts.requestId,
  };
  const doubles: Record<DoubleName, number> = {
    "duration.ms": settled.at - facts.started,
    "origin.duration.ms":
      facts.originStarted === undefined || record.local !== undefined
        ? 0
        : settled.at - facts.originStarted,
    "request.bytes": facts.requestBytes,
    "answer.bytes": settled.answerBytes,
    "repairs.count": repairCount(repairs),
    "tools.count": record.tools ?? 0,
    "outcome.weight": settled.weight,
    "task.duration.ms": record.taskCreated === undefined ? 0 : settled.at - record.taskCreated,
  };
  return {
    indexes: [facts.index],
    blobs: BLOBS.map((name) => blobs[name]),
    doubles: DOUBLES.map((name) => doubles[name]),
  };
}
