/**
 * The layers of src/ and which way imports go (ARCHITECTURE.md, "Layers"), as
 * data: the one place they are written. `npm run lint:layers` writes biome.json's
 * `noRestrictedImports` overrides from it; `npm run lint` enforces them, and
 * test/node/layering.test.ts proves, by a forbidden import from every layer to
 * every module, that the lint fails on each back-edge and only on those.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Each module of src/ as import specifiers name it (biome's import globs). */
export const MODULES = {
  json: { path: "src/json.ts", patterns: ["**/json"] },
  "json-exact": { path: "src/json-exact.ts", patterns: ["**/json-exact"] },
  "json-numbers": { path: "src/json-numbers.ts", patterns: ["**/json-numbers"] },
  "json-splice": { path: "src/json-splice.ts", patterns: ["**/json-splice"] },
  "json-spans": { path: "src/json-spans.ts", patterns: ["**/json-spans"] },
  "json-written": { path: "src/json-written.ts", patterns: ["**/json-written"] },
  "json-syntax": { path: "src/json-syntax.ts", patterns: ["**/json-syntax"] },
  "bounded-map": { path: "src/bounded-map.ts", patterns: ["**/bounded-map"] },
  digest: { path: "src/digest.ts", patterns: ["**/digest"] },
  "canonical-path": { path: "src/canonical-path.ts", patterns: ["**/canonical-path"] },
  "direction-controls": {
    path: "src/direction-controls.ts",
    patterns: ["**/direction-controls"],
  },
  log: { path: "src/log.ts", patterns: ["**/log"] },
  "text-cut": { path: "src/text-cut.ts", patterns: ["**/text-cut"] },
  "wait-until": { path: "src/wait-until.ts", patterns: ["**/wait-until"] },
  protocol: { path: "src/protocol/", patterns: ["**/protocol/**"] },
  names: { path: "src/names/", patterns: ["**/names/**"] },
  args: { path: "src/args/", patterns: ["**/args/**"] },
  schemas: { path: "src/schemas/", patterns: ["**/schemas/**"] },
  rules: { path: "src/rules/", patterns: ["**/rules/**"] },
  config: { path: "src/config/", patterns: ["**/config", "**/config/**"] },
  transport: { path: "src/transport/", patterns: ["**/transport/**"] },
  auth: { path: "src/auth/", patterns: ["**/auth/**"] },
  analytics: { path: "src/analytics/", patterns: ["**/analytics/**"] },
  toolmap: { path: "src/toolmap/", patterns: ["**/toolmap/**"] },
  rewrite: { path: "src/rewrite/", patterns: ["**/rewrite/**"] },
  routes: { path: "src/routes/", patterns: ["**/routes/**"] },
  app: { path: "src/app.ts", patterns: ["**/app", "**/index"] },
};

/** What src/ never imports, whatever its layer. */
export const OUTSIDE = [
  "**/test/**",
  "**/bench/**",
  "**/support/**",
  "**/demo/**",
  "**/scripts/**",
];

const FOUNDATION = [
  "json",
  "json-exact",
  "json-numbers",
  "json-splice",
  "json-spans",
  "json-written",
  "json-syntax",
  "bounded-map",
  "digest",
  "canonical-path",
  "direction-controls",
  "log",
  "text-cut",
  "wait-until",
];
const CORE = ["names", "args", "schemas", "rules"];
/** What rewrite/ may import: every layer beside and below it (routes/ adds rewrite/ itself). */
const BELOW_REWRITE = [
  ...FOUNDATION,
  "protocol",
  ...CORE,
  "config",
  "transport",
  "auth",
  "analytics",
  "toolmap",
];

/** Lowest first: each layer, its files, the modules it may import, and why. */
export const LAYERS = [
  {
    name: "foundation",
    modules: FOUNDATION,
    mayImport: [],
    why: "the foundation (json.ts, json-exact.ts, json-splice.ts, json-spans.ts, json-written.ts, json-syntax.ts, bounded-map.ts, digest.ts, canonical-path.ts, direction-controls.ts, log.ts, text-cut.ts) imports nothing from src/.",
  },
  {
    name: "protocol",
    modules: ["protocol"],
    mayImport: ["json", "json-spans", "json-written"],
    why: "protocol/ (message shapes) sits below everything but json.ts, json-spans.ts and json-written.ts.",
  },
  {
    name: "names",
    modules: ["names"],
    mayImport: ["json", "protocol"],
    why: "names/ is pure core: it imports only json.ts and protocol/.",
  },
  {
    name: "args",
    modules: ["args"],
    mayImport: ["json", "text-cut", "protocol"],
    why: "args/ is pure core: it imports only json.ts, text-cut.ts and protocol/.",
  },
  {
    name: "schemas",
    modules: ["schemas"],
    mayImport: ["json", "protocol", "names", "args"],
    why: "schemas/ is pure core: it imports only json.ts, protocol/, names/ and args/.",
  },
  {
    name: "rules",
    modules: ["rules"],
    mayImport: ["json", "protocol", "names", "args", "schemas"],
    why: "rules/ (the operator's tool rules) is pure core: it imports only json.ts, protocol/ and the rest of the core.",
  },
  {
    name: "config",
    modules: ["config"],
    mayImport: ["json", "canonical-path", "protocol", ...CORE],
    why: "config/ reads settings; it sits below the shell and logs nothing.",
  },
  {
    name: "transport",
    modules: ["transport"],
    mayImport: [...FOUNDATION, "protocol", "config"],
    why: "transport/ (HTTP, bodies, streams) knows nothing of tools or sign-in.",
  },
  {
    name: "auth",
    modules: ["auth"],
    mayImport: [...FOUNDATION, "protocol", "config", "transport"],
    why: "auth/ (sign-in) sits on transport/, beside toolmap/, never the core.",
  },
  {
    name: "analytics",
    modules: ["analytics"],
    mayImport: [...FOUNDATION, "protocol", "transport"],
    why: "analytics/ (call records and their data points) sits on transport/, beside auth/ and toolmap/.",
  },
  {
    name: "toolmap",
    modules: ["toolmap"],
    mayImport: [...FOUNDATION, "protocol", ...CORE, "config", "transport"],
    why: "toolmap/ sits on transport/ and the core, beside auth/.",
  },
  {
    name: "rewrite",
    modules: ["rewrite"],
    mayImport: BELOW_REWRITE,
    why: "rewrite/ sits below routes/ and the app.",
  },
  {
    name: "routes",
    modules: ["routes"],
    mayImport: [...BELOW_REWRITE, "rewrite"],
    why: "routes/ sits below the app.",
  },
  {
    name: "app",
    modules: ["app"],
    mayImport: Object.keys(MODULES).filter((module) => module !== "app"),
    why: "src/ never imports tests, benchmarks, the demo or scripts.",
  },
];

/** The files of a layer, as biome `includes` globs. */
function includesOf(layer) {
  return layer.modules.flatMap((module) => {
    if (module === "app") return ["src/app.ts", "src/index.ts"];
    const { path } = MODULES[module];
    return [path.endsWith("/") ? `${path}**` : path];
  });
}

/** biome.json's override for one layer. */
function overrideOf(layer) {
  const forbidden = Object.keys(MODULES).filter(
    (module) => !layer.mayImport.includes(module) && !layer.modules.includes(module),
  );
  return {
    includes: includesOf(layer),
    linter: {
      rules: {
        style: {
          noRestrictedImports: {
            level: "error",
            options: {
              patterns: [
                {
                  group: [...forbidden.flatMap((module) => MODULES[module].patterns), ...OUTSIDE],
                  message: `Layering (ARCHITECTURE.md): ${layer.why}`,
                },
              ],
            },
          },
        },
      },
    },
  };
}

export function layerOverrides() {
  return LAYERS.map(overrideOf);
}

/** Whether a biome override is one of the layers' (the others, for test/ and bench/, are kept). */
const isLayerOverride = (override) => override.includes.some((glob) => glob.startsWith("src/"));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = new URL("../biome.json", import.meta.url);
  const biome = JSON.parse(readFileSync(path, "utf8"));
  const others = biome.overrides.filter((override) => !isLayerOverride(override));
  biome.overrides = [...layerOverrides(), ...others];
  writeFileSync(path, `${JSON.stringify(biome, null, 2)}\n`);
}
