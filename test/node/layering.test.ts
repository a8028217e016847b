/**
 * The layering lint is complete (ARCHITECTURE.md, "Layers"): from every layer,
 * an import of every module it may not use fails `biome lint` with the
 * layer's message, and an import of every module it may use passes. The
 * probes are written into a scratch copy of src/'s layout with the project's
 * own biome.json, one biome run per imported module. And biome.json says what
 * scripts/layers.mjs says, and every file of src/ belongs to a layer.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repository's scripts, without types.
import { LAYERS, layerOverrides, MODULES, OUTSIDE } from "../../scripts/layers.mjs";

interface Layer {
  name: string;
  modules: string[];
  mayImport: string[];
}
const layers = LAYERS as Layer[];
const modules = MODULES as Record<string, { path: string }>;

const ROOT = join(import.meta.dirname, "../..");
const BIOME = join(ROOT, "node_modules/.bin/biome");
const scratch = mkdtempSync(join(tmpdir(), "layering-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The files a layer's probes are written as: a probe in each directory, the module's own file otherwise. */
function probeFiles(layer: Layer): string[] {
  return layer.modules.flatMap((module) => {
    if (module === "app") return ["src/app.ts", "src/index.ts"];
    const { path } = modules[module] as { path: string };
    return [path.endsWith("/") ? `${path}probe.ts` : path];
  });
}

/** How `from` imports `module`. */
function specifier(from: string, module: string): string {
  const { path } = modules[module] as { path: string };
  const target = path.endsWith("/") ? `${path}target` : path.replace(/\.ts$/, "");
  const relativePath = relative(dirname(from), target);
  return relativePath.startsWith(".") ? relativePath : `./${relativePath}`;
}

/** The files `biome lint` reports a layering error in, with the message it gave. */
function lintLayering(files: Record<string, string>): Map<string, string> {
  const dir = mkdtempSync(join(scratch, "run-"));
  copyFileSync(join(ROOT, "biome.json"), join(dir, "biome.json"));
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), source);
  }
  let output: string;
  try {
    output = execFileSync(BIOME, ["lint", "--vcs-enabled=false", "--reporter=json", "."], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout);
  }
  const { diagnostics } = JSON.parse(output) as {
    diagnostics: Array<{ category: string; message: string; location: { path: string } }>;
  };
  return new Map(
    diagnostics
      .filter((d) => d.category === "lint/style/noRestrictedImports")
      .map((d) => [d.location.path, d.message]),
  );
}

describe("the layering lint", () => {
  it("biome.json holds the overrides scripts/layers.mjs writes", () => {
    const biome = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8"));
    expect(biome.overrides.slice(0, layers.length)).toEqual(layerOverrides());
  });

  it("covers every file of src/", () => {
    const covered = (file: string) =>
      layers.some((layer) =>
        probeFiles(layer).some((probe) =>
          probe.endsWith("probe.ts") ? file.startsWith(dirname(probe)) : file === probe,
        ),
      );
    const files = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
      // A declaration (`.d.ts`) types a runtime's module and imports nothing.
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
      .map((file) => `src/${file}`);
    expect(files.filter((file) => !covered(file))).toEqual([]);
  });

  it.each(Object.keys(MODULES))(
    "fails an import of %s from every layer that may not use it, and only there",
    (module) => {
      const probes: Record<string, string> = {};
      for (const layer of layers) {
        if (layer.modules.includes(module)) continue;
        for (const file of probeFiles(layer))
          probes[file] = `import "${specifier(file, module)}";\n`;
      }
      const flagged = lintLayering(probes);
      for (const layer of layers) {
        if (layer.modules.includes(module)) continue;
        for (const file of probeFiles(layer)) {
          const allowed = layer.mayImport.includes(module);
          expect(flagged.has(file), `${layer.name} (${file}) importing ${module}`).toBe(!allowed);
          if (!allowed) expect(flagged.get(file)).toMatch(/^Layering \(ARCHITECTURE\.md\): /);
        }
      }
    },
  );

  it("fails an import of tests, benchmarks, support, the demo or scripts from every layer", () => {
    const probes: Record<string, string> = {};
    const outside = (OUTSIDE as string[]).map((glob) =>
      glob.replaceAll("*", "").replaceAll("/", ""),
    );
    for (const layer of layers) {
      for (const [index, file] of probeFiles(layer).entries()) {
        const target = outside[index % outside.length];
        probes[file] = `import "${relative(dirname(file), `${target}/x`)}";\n`;
      }
    }
    const flagged = lintLayering(probes);
    expect(Object.keys(probes).filter((file) => !flagged.has(file))).toEqual([]);
  });
});
