/** Search mode's search (src/toolmap/tool-search.ts), over the catalog's tools. */
import { describe, expect, it } from "vitest";
import { MAX_QUERY_CHARS, MAX_QUERY_WORDS, ToolSearch } from "../../src/toolmap/tool-search";
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
