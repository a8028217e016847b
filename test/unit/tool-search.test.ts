/** Search mode's search (src/toolmap/tool-search.ts, search-terms.ts), over the catalog's tools. */
import fc from "fast-check";
import SearchableMap from "minisearch/SearchableMap";
import { describe, expect, it } from "vitest";
import { MAX_SYNONYMS, withSynonyms } from "../../src/toolmap/search-synonyms";
import {
  identifierWords,
  indexedTools,
  MAX_QUERY_CHARS,
  MAX_QUERY_WORDS,
  ParameterReads,
  termsOf,
  wordsOf,
} from "../../src/toolmap/search-terms";
import { ToolSearch } from "../../src/toolmap/tool-search";
import { nearWords } from "../../src/toolmap/word-index";
import { catalogTools } from "../fixtures/node/catalog-origin";

const search = new ToolSearch(
  catalogTools(300).map((tool) => ({
    name: `${tool.name}_model`,
    original: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  })),
);
const names = (query: string, limit = 3) => search.search(query, limit).map((tool) => tool.name);

/** A tool of a search's own listing, by its name and description. */
const tool = (name: string, description: string) => ({
  name,
  original: name,
  description,
  inputSchema: { type: "object" },
});

describe("identifier splitting", () => {
  const nameTerms = (name: string) => termsOf(identifierWords(name));

  it("reads snake_case, camelCase, PascalCase, dotted, kebab and slashed names as the same words", () => {
    for (const name of [
      "get_pull_request",
      "getPullRequest",
      "GetPullRequest",
      "get.pull.request",
      "get-pull-request",
      "get/pull/request",
      "API-get-pull_request",
    ]) {
      expect(
        nameTerms(name).filter((term) => term !== "api"),
        name,
      ).toEqual(["get", "pull", "request"]);
    }
    expect(nameTerms("HTMLParser")).toEqual(["html", "parser"]);
    expect(nameTerms("getURLContent")).toEqual(["get", "url", "content"]);
    expect(nameTerms("kubectl_get_4")).toEqual(["kubectl", "get", "4"]);
    expect(nameTerms("base64Encode")).toEqual(["base64", "encode"]);
  });

  it("keeps a camelCase word of prose whole, and looks for a query's both whole and in words", () => {
    expect(termsOf("Create a GitHub issue in localStorage")).toEqual([
      "create",
      "github",
      "issue",
      "localstorage",
    ]);
    expect(wordsOf("getPullRequest")).toEqual(["getpullrequest", "get", "pull", "request"]);
    expect(wordsOf("list_issues of the repo")).toEqual(["list", "issues", "repo"]);
  });

  it("splits and lowercases ASCII text as it does text with other characters", () => {
    // Each ASCII character between two letters, once in text of ASCII alone
    // and once in text with an accented letter.
    const ascii = Array.from({ length: 128 }, (_, code) => `W${String.fromCharCode(code)}x`).join(
      " ",
    );
    expect(termsOf(`${ascii} é`)).toEqual([...termsOf(ascii), "é"]);
    expect(termsOf("Tab\there, NUL\u0000kept; GitHub_API-v2")).toEqual([
      "tab",
      "here",
      "nul\u0000kept",
      "github",
      "api",
      "v2",
    ]);
  });

  it("finds a tool whatever way its name and the query join the words", () => {
    const tools = ["getPullRequest", "list_issues", "files.read", "API-post-search"].map(
      (original) => ({ name: original, original, inputSchema: { type: "object" } }),
    );
    const joined = new ToolSearch(tools);
    const first = (query: string) => joined.search(query, 1)[0]?.original;
    expect(first("get pull request")).toBe("getPullRequest");
    expect(first("get_pull_request")).toBe("getPullRequest");
    expect(first("listIssues")).toBe("list_issues");
    expect(first("read files")).toBe("files.read");
    expect(first("post search")).toBe("API-post-search");
  });

  it("finds a tool by its parameters' names and descriptions", () => {
    const joined = new ToolSearch([
      {
        name: "a",
        original: "browser_handle_dialog",
        description: "Handle a dialog",
        inputSchema: {
          type: "object",
          properties: {
            accept: { type: "boolean", description: "Whether to accept the dialog." },
            promptText: { type: "string" },
          },
        },
      },
      {
        name: "b",
        original: "browser_click",
        description: "Click an element",
        inputSchema: { type: "object", properties: { ref: { type: "string" } } },
      },
    ]);
    expect(joined.search("accept", 1)[0]?.original).toBe("browser_handle_dialog");
    expect(joined.search("prompt text", 1)[0]?.original).toBe("browser_handle_dialog");
  });

  it("reads a parameter two tools share in each, up to each one's bound", () => {
    // The first 100 characters of each description are read, and 400 of a
    // tool's parameters in all: alpha's `shared` starts at 312 (3 × 104), and
    // only its first 88 characters are read, not "yak" at 95.
    const filler = { description: "q".repeat(100) };
    const shared = { description: `Zebra${" crossing".repeat(9)} yak.` };
    const tools = [
      { original: "alpha_tool", properties: { p1: filler, p2: filler, p3: filler, shared } },
      { original: "beta_tool", properties: { shared } },
    ].map(({ original, properties }) => ({
      name: original,
      original,
      description: "Does something.",
      inputSchema: { type: "object", properties },
    }));
    const found = (query: string) =>
      new ToolSearch(tools).search(query, 5).map((tool) => tool.original);
    expect(found("zebra")).toEqual(expect.arrayContaining(["alpha_tool", "beta_tool"]));
    expect(found("yak")).toEqual(["beta_tool"]);
  });

  it("indexes a tool's name and title only so far", () => {
    // An origin's megabyte of title would cost the build CPU and find nothing more.
    const filler = "word ".repeat(30);
    const { indexed } = indexedTools([
      {
        name: "a",
        original: `${"x".repeat(200)}_nearby_${"y".repeat(250)}_faraway`,
        title: `${filler}closeby ${"filler ".repeat(200_000)}distant`,
        inputSchema: { type: "object" },
      },
    ]);
    const [tool] = indexed;
    expect(tool?.name).toContain("nearby");
    expect(tool?.name).not.toContain("faraway");
    expect(tool?.description).toContain("closeby");
    expect(tool?.description).not.toContain("distant");
  });

  it("keeps at most 4,096 parameters read in a build, and reads the others each time", () => {
    // A listing whose parameters are each unlike the others (as a hostile one's may be),
    // read alike whether or not they are kept: 6,000 read, each of its tool's 24 detail terms.
    const tools = Array.from({ length: 500 }, (_, tool) => ({
      name: `t${tool}`,
      original: `t${tool}`,
      inputSchema: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: 12 }, (_, p) => [
            `p${tool}x${p}`,
            { description: `Word${tool}x${p}.` },
          ]),
        ),
      },
    }));
    const reads = new ParameterReads();
    const { details } = indexedTools(tools, reads);
    expect(reads.kept).toBe(4096);
    expect(details.get("word499x11")).toEqual([499]);
    expect(details.get("p499x11")).toEqual([499]);
  });
});

describe("ToolSearch", () => {
  it("finds a tool by the words of its name, and answers with its model-facing name", () => {
    expect(names("take screenshot", 1)).toEqual(["browser_take_screenshot_model"]);
    expect(names("kubectl get copy 4", 1)).toEqual(["kubectl_get_4_model"]);
  });

  it("finds a tool by its description, by prefix, and with a typo", () => {
    expect(names("firecrawl", 1)[0]).toMatch(/^firecrawl_/);
    expect(names("screensh", 1)[0]).toMatch(/screenshot/);
    expect(names("kubctl", 1)[0]).toMatch(/^kubectl_get/);
  });

  it("returns at most `limit` tools; the first ones for a query with no words to look for", () => {
    expect(names("search", 5)).toHaveLength(5);
    for (const query of ["   ", "the of and", "?!"]) {
      expect(names(query, 2), query).toEqual(["read_text_file_model", "edit_file_model"]);
    }
  });

  it("reads a query only up to its bounds, in characters and in words", () => {
    expect(names(`${"x".repeat(MAX_QUERY_CHARS)} kubectl`)).toEqual([]);
    expect(names(`${"zz ".repeat(MAX_QUERY_WORDS)}kubectl`)).toEqual([]);
    expect(names(`${"zz ".repeat(MAX_QUERY_WORDS - 1)}kubectl`, 1)[0]).toMatch(/^kubectl_get/);
  });
});

describe("what a query's words find", () => {
  // Matched as the start of longer terms, a word of one or two letters read the postings of every
  // term it starts: 8 such words, most of the index (30 ms on 10,000 tools, against 2.4 ms for
  // "read text file"). From 3 letters a word is still found as a start (docs/search-mode.md).
  const short = new ToolSearch([
    tool("read_file", "Reads a file."),
    tool("re_run", "Runs a job again."),
    tool("git_status", "Shows the working tree."),
  ]);
  const found = (query: string) => short.search(query, 5).map(({ name }) => name);

  it("takes a word of one or two letters whole, not as the start of longer words", () => {
    expect(found("re")).toEqual(["re_run"]);
    expect(found("gi")).toEqual([]);
  });

  it("takes a word of three letters or more as the start of longer words too", () => {
    expect(found("rea")).toEqual(["read_file"]);
    expect(found("stat")).toEqual(["git_status"]);
  });

  it("takes a word as the start of a word every tool has in its name and its sentence", () => {
    const repositories = new ToolSearch(
      ["get", "list", "fork"].map((verb) =>
        tool(`${verb}_repository`, `Does ${verb} on a repository.`),
      ),
    );
    expect(repositories.search("repo fork", 1).map(({ name }) => name)).toEqual([
      "fork_repository",
    ]);
    expect(repositories.search("repo", 5)).toHaveLength(3);
  });
});

describe("synonyms", () => {
  const files = new ToolSearch([
    tool("list_directory", "Lists the entries of a directory."),
    tool("create_directory", "Creates a directory."),
    tool("create_folder", "Creates a folder."),
    tool("read_file", "Reads a file."),
  ]);
  const found = (query: string) => files.search(query, 5).map(({ name }) => name);

  it("finds a tool by a synonym of a word it lacks", () => {
    expect(found("show what a folder holds")[0]).toBe("list_directory");
  });

  it("weighs a synonym less than the word itself", () => {
    expect(found("make a folder").slice(0, 2)).toEqual(["create_folder", "create_directory"]);
  });

  it("counts a synonym for its word: a tool with both is not ranked as having two words", () => {
    // `folder`, `directory` and `dir` all stand for the query's `folder`: `read_file`'s two words win.
    const both = new ToolSearch([
      tool("folder_directory_dir", "A folder, a directory, a dir."),
      tool("read_file", "Reads a file of a folder."),
    ]);
    expect(both.search("folder file", 2).map(({ name }) => name)).toEqual([
      "read_file",
      "folder_directory_dir",
    ]);
  });

  it("looks for at most MAX_SYNONYMS synonyms besides the query's words, each standing for its word", () => {
    const words = ["show", "find", "fetch", "folder", "open"];
    const terms = withSynonyms(words);
    expect(terms.size).toBe(words.length + MAX_SYNONYMS);
    for (const word of words) expect(terms.get(word)).toBe(word);
    expect(terms.get("list")).toBe("show");
    expect(terms.get("directory")).toBe("folder");
    expect(terms.get("navigate")).toBeUndefined();
  });
});

describe("what one search reads of an index whose words all start alike", () => {
  // An origin's listing (untrusted) whose every word starts with the same letters: a query's word
  // that starts them too was read as the start of every word of the index, each tool's every word
  // once per query word (0.9 s for 8 such words and 2,000 tools; a batch carries 32 searches).
  const TOOLS = 2_000;
  const word = (tool: number, i: number) => `aaaaaaaaaa${tool.toString(36)}x${i.toString(36)}`;
  const words = (tool: number, from: number, count: number) =>
    Array.from({ length: count }, (_, i) => word(tool, from + i));
  const alike = new ToolSearch(
    Array.from({ length: TOOLS }, (_, tool) => ({
      name: `t${tool}`,
      original: words(tool, 0, 16).join("_"),
      title: words(tool, 100, 12).join(" "),
      description: `${words(tool, 200, 12).join(" ")}.`,
      inputSchema: { type: "object" },
    })),
  );
  const found = (query: string) => alike.search(query, 20).map((tool) => tool.name);

  it("reads a word that starts the words of thousands of tools whole, as a word of prose", () => {
    // Read as starts, each of these words found every tool, having read each tool's every word
    // (about 1.5 s for ten such searches here); read whole, they are no tool's word.
    expect(found("aaa aaaa")).toEqual([]);
  });

  it("forgives a typo in a word no deeper in the index than the words a typo can make of it", () => {
    // The walk for a word of 5 letters with one typo, over the words of 200 of these tools: it
    // reads the index's tree no deeper than 6 letters, where MiniSearch's own went on through
    // every longer word below them (120 ms for ten searches of the whole index here).
    const tree = countingTree(
      SearchableMap.from(
        Array.from({ length: 200 }, (_, tool) => [
          word(tool, 0),
          new Map([[0, new Map([[tool, 1]])]]),
        ]),
      )._tree,
    );
    expect(nearWords(tree.root, "aaaaa", 1).size).toBe(0);
    const ours = tree.edges();
    new SearchableMap(tree.root as ConstructorParameters<typeof SearchableMap>[0]).fuzzyGet(
      "aaaaa",
      1,
    );
    const theirs = tree.edges() - ours;
    expect(ours).toBeLessThanOrEqual(6);
    expect(theirs).toBeGreaterThan(200);
    expect(alike.search(`${word(7, 3).slice(0, -1)}q`, 1).map((tool) => tool.name)).toEqual(["t7"]);
  });

  it("still finds a tool by a word it has whole, and by the start of a word few tools have", () => {
    expect(alike.search(word(7, 3), 1).map((tool) => tool.name)).toEqual(["t7"]);
    expect(alike.search(word(1234, 205).slice(0, -1), 1).map((tool) => tool.name)).toEqual([
      "t1234",
    ]);
  });
});

describe("what one search reads of an index whose words start alike, each word another", () => {
  // An origin's listing whose words each start with `create` and are each another word, in few
  // fields each: a query's `createa` stood for the 1,480 words it starts (each in one field, within
  // the index's two a tool), and one search of 8 such words took 29 ms here (0.8 ms read whole):
  // MiniSearch's cost is by word as much as by field.
  const TOOLS = 2_000;
  const word = (tool: number, i: number) => `create${tool.toString(36)}q${i.toString(36)}`;
  const words = (tool: number, from: number, count: number) =>
    Array.from({ length: count }, (_, i) => word(tool, from + i));
  const distinct = new ToolSearch(
    Array.from({ length: TOOLS }, (_, tool) => ({
      name: `t${tool}`,
      original: `t${tool}_${words(tool, 0, 16).join("_")}`,
      title: words(tool, 100, 12).join(" "),
      description: `${words(tool, 200, 12).join(" ")}.`,
      inputSchema: { type: "object" },
    })),
  );

  it("reads a word that starts more than 256 words whole", () => {
    expect(distinct.search("createa", 20)).toEqual([]);
    // The start of fewer words is still read as their start.
    // (`a` and `aq` in base 36: tools 10 and 386, 80 words.)
    const started = distinct.search("createaq", 20).map((tool) => tool.name);
    expect(started.sort()).toEqual(["t10", "t386"]);
  });

  it("forgives no typo in a word whose near words are more than 256, however few their fields", () => {
    // 300 words each one letter from `create`, each in one tool's sentence.
    const near = Array.from({ length: 300 }, (_, i) => `crea${String.fromCharCode(0x4e00 + i)}e`);
    const typos = new ToolSearch(
      near.map((each, i) => ({
        name: `n${i}`,
        original: `n${i}`,
        description: `${each}.`,
        inputSchema: { type: "object" },
      })),
    );
    expect(typos.search("create", 20)).toEqual([]);
    expect(typos.search(near[7] as string, 1).map((tool) => tool.name)).toEqual(["n7"]);
  });
});

describe("what one search reads of an index whose words are all one typo from a word", () => {
  // An origin's listing whose every word is one edit from `create` (a typo MiniSearch forgives in
  // a word of 5 letters or more): a query's `create` read each such word's tools, all the index.
  const TOOLS = 2_000;
  const letters = "bcdfghjklmnpqrstvwxyz";
  const near = [...letters].flatMap((letter) =>
    [0, 1, 2, 3, 4, 5, 6].map((at) => `${"create".slice(0, at)}${letter}${"create".slice(at)}`),
  );
  const typos = new ToolSearch(
    Array.from({ length: TOOLS }, (_, tool) => {
      const words = Array.from({ length: 80 }, (_, i) => near[(tool * 7 + i) % near.length]);
      return {
        name: `t${tool}`,
        original: `t${tool}_${words.slice(0, 30).join("_")}`,
        title: words.slice(30, 55).join(" "),
        description: `${words.slice(55).join(" ")}.`,
        inputSchema: { type: "object" },
      };
    }),
  );

  it("forgives no typo in a word whose near words are in more fields than the index has", () => {
    // Each typo forgiven, a search for `create` found every tool, having read 160,000 of the
    // index's words' fields (330 ms for ten such searches here); read as written, it is no tool's.
    expect(typos.search("create", 20)).toEqual([]);
    expect(typos.search("t1234", 1).map((tool) => tool.name)).toEqual(["t1234"]);
  });
});

/**
 * A copy of a radix tree whose every node counts the edges read from it (`edges`), for what
 * a walk reads of the tree rather than how long it takes.
 */
function countingTree(tree: Map<string, unknown>) {
  let edges = 0;
  class Counted extends Map<string, unknown> {
    override *[Symbol.iterator](): MapIterator<[string, unknown]> {
      for (const entry of super.entries()) {
        edges++;
        yield entry;
      }
    }
    // MiniSearch's own walk reads a node's keys.
    override *keys(): MapIterator<string> {
      for (const key of super.keys()) {
        edges++;
        yield key;
      }
    }
  }
  const copy = (node: Map<string, unknown>): Counted =>
    new Counted(
      [...node].map(([key, below]) => [
        key,
        key === "" ? below : copy(below as Map<string, unknown>),
      ]),
    );
  return { root: copy(tree), edges: () => edges };
}

describe("near words (a typo forgiven)", () => {
  it("finds what MiniSearch's own walk finds, at every distance", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", "c"), minLength: 1, maxLength: 9 });
    fc.assert(
      fc.property(
        fc.uniqueArray(word, { maxLength: 60 }),
        word,
        fc.integer({ min: 0, max: 2 }),
        (words, query, distance) => {
          // Each word in its own tool's name.
          const map = SearchableMap.from(
            words.map((w, i) => [w, new Map([[0, new Map([[i, 1]])]])]),
          );
          const sorted = (found: Map<string, [unknown, number]>) => [...found].sort();
          expect(sorted(nearWords(map._tree, query, distance))).toEqual(
            sorted(map.fuzzyGet(query, distance)),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
