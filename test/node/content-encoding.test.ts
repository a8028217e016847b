/**
 * Content-Encoding at the real HTTP boundary: an origin that compresses its
 * answers (gzip, br, deflate, zstd; gzip as x-gzip and GZIP, which the runtime
 * leaves encoded), the proxy served by wrangler, and raw
 * HTTP on the client side. Whatever the encoding, the body the client gets
 * decodes exactly as its `Content-Encoding` says, and event streams still
 * arrive event by event.
 */
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startConformanceOrigin } from "../fixtures/node/conformance-origin";
import { serveProxy } from "./serve-proxy";

const ENCODERS = {
  gzip: () => zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH }),
  deflate: () => zlib.createDeflate({ flush: zlib.constants.Z_SYNC_FLUSH }),
  br: () => zlib.createBrotliCompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH }),
  zstd: () => zlib.createZstdCompress({ flush: zlib.constants.ZSTD_e_flush }),
  // gzip under labels the runtime does not decode (it decodes `gzip` and `br` as written alone).
  "x-gzip": () => zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH }),
  GZIP: () => zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH }),
} as const;
type Encoding = keyof typeof ENCODERS;

const DECODERS: Record<string, (body: Buffer) => Buffer> = {
  gzip: zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
  zstd: zlib.zstdDecompressSync,
  "x-gzip": zlib.gunzipSync,
  GZIP: zlib.gunzipSync,
};

/** In front of the origin: compresses every answer with `?enc=` (kept by the proxy on the way). */
async function startCompressingHop(origin: URL) {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://hop");
    const encoding = url.searchParams.get("enc") as Encoding | null;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "accept-encoding")
        headers.set(name, value);
    }
    const answer = await fetch(new URL(`${url.pathname}${url.search}`, origin), {
      method: request.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const out = Object.fromEntries(answer.headers);
    delete out["content-length"];
    delete out["content-encoding"];
    if (encoding) out["content-encoding"] = encoding;
    response.writeHead(answer.status, out);
    if (!answer.body) return void response.end();
    const body = Readable.fromWeb(answer.body);
    await (encoding
      ? pipeline(body, ENCODERS[encoding](), response)
      : pipeline(body, response)
    ).catch(() => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

interface RawAnswer {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** One POST over raw HTTP, body decoded by its own label, as an HTTP client would. */
function post(url: URL, body: unknown, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "accept-encoding": "gzip, br, deflate, zstd",
          ...headers,
        },
      },
      async (response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks);
        const encoding = response.headers["content-encoding"];
        const decode = encoding ? DECODERS[encoding] : undefined;
        if (encoding && !decode) return reject(new Error(`unexpected encoding ${encoding}`));
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: (decode ? decode(raw) : raw).toString("utf8"),
        });
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

// A mislabeled body can leave a client waiting on a stream it cannot read: fail fast.
vi.setConfig({ testTimeout: 30_000 });

let origin: Awaited<ReturnType<typeof startConformanceOrigin>>;
let hop: Awaited<ReturnType<typeof startCompressingHop>>;
let proxy: Awaited<ReturnType<typeof serveProxy>>;

beforeAll(async () => {
  origin = await startConformanceOrigin();
  hop = await startCompressingHop(origin.url);
  proxy = await serveProxy(hop.url);
});

afterAll(async () => {
  await proxy?.dispose();
  hop?.close();
  origin?.close();
});

async function session(encoding: Encoding, json: boolean) {
  const url = new URL(proxy.url);
  url.searchParams.set("enc", encoding);
  if (json) url.searchParams.set("json", "");
  const init = await post(
    url,
    rpc(0, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "encoding-test", version: "1" },
    }),
    {},
  );
  expect(init.status).toBe(200);
  const headers = {
    "mcp-session-id": String(init.headers["mcp-session-id"]),
    "mcp-protocol-version": "2025-11-25",
  };
  return { url, headers };
}

describe.each(Object.keys(ENCODERS) as Encoding[])(
  "origin answering with Content-Encoding: %s",
  (encoding) => {
    it("event streams reach the client decodable as labeled, tools/list rewritten or not", async () => {
      const { url, headers } = await session(encoding, false);
      for (const method of ["tools/list", "prompts/list"]) {
        const answer = await post(url, rpc(1, method), headers);
        expect(answer.status).toBe(200);
        expect(answer.headers["content-type"]).toContain("text/event-stream");
        expect(answer.body).toMatch(/data: \{"result":\{"(tools|prompts)":\[/);
      }
    });

    it("JSON bodies reach the client decodable as labeled", async () => {
      const { url, headers } = await session(encoding, true);
      const answer = await post(url, rpc(1, "tools/list"), headers);
      expect(answer.headers["content-type"]).toContain("application/json");
      expect(JSON.parse(answer.body).result.tools.map((t: { name: string }) => t.name)).toContain(
        "test_simple_text",
      );
    });
  },
);

describe("decoded encodings", () => {
  it("an event stream the runtime decoded goes out uncompressed", async () => {
    const { url, headers } = await session("gzip", false);
    const answer = await post(url, rpc(1, "tools/list"), headers);
    expect(answer.headers["content-encoding"]).toBeUndefined();
  });
});
