#!/usr/bin/env node
/**
 * Adds to package-lock.json the platform-specific optional packages that npm left
 * out, so that `npm ci` accepts the lockfile on every platform.
 *
 * Why: npm writes a lock entry only for packages its registry can resolve. On a
 * registry mirror that carries Linux binaries only, the macOS and Windows builds
 * of Biome and workerd are missing from the lock, and `npm ci` then refuses the
 * lock as out of sync with package.json. Each missing entry is written the way
 * npm writes it (version, os, cpu, optional), without `resolved` or `integrity`,
 * which npm fills in from the registry on the machine that installs it.
 *
 * Run after any change to dependencies: `npm install && npm run lock:complete`.
 * A no-op where the registry already provided every platform.
 */
import { readFileSync, writeFileSync } from "node:fs";

const LOCKFILE = new URL("../package-lock.json", import.meta.url);

/** os, cpu and libc from the platform suffix of a binary package's name. */
function platformOf(name) {
  const suffix = name
    .split("/")
    .pop()
    .replace(/^(cli|workerd)-/, "");
  const [os, arch = "", libc] = suffix.split("-");
  const osName = os === "windows" ? "win32" : os;
  const cpu = arch === "64" ? "x64" : arch;
  if (!["android", "darwin", "linux", "win32"].includes(osName) || !cpu) return undefined;
  return { os: [osName], cpu: [cpu], ...(libc === "musl" ? { libc: ["musl"] } : {}) };
}

/** Where Node would look for `dependency` from the package at `path`, nearest first. */
function lookupPaths(path, dependency) {
  const paths = [];
  for (let dir = path; ; ) {
    paths.push(`${dir ? `${dir}/` : ""}node_modules/${dependency}`);
    if (!dir) return paths;
    const parent = dir.lastIndexOf("/node_modules/");
    dir = parent === -1 ? "" : dir.slice(0, parent);
  }
}

const lock = JSON.parse(readFileSync(LOCKFILE, "utf8"));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  const optional = Object.entries(entry.optionalDependencies ?? {});
  const resolved = (dependency, version) =>
    lookupPaths(path, dependency).find((at) => lock.packages[at]?.version === version);
  for (const [dependency, version] of optional) {
    const platform = platformOf(dependency);
    if (!platform || resolved(dependency, version)) continue;
    // Put it where npm put the platform builds it did record for this package.
    const sibling = optional.map(([name, v]) => resolved(name, v)).find(Boolean);
    const target = sibling
      ? `${sibling.slice(0, sibling.lastIndexOf("node_modules/"))}node_modules/${dependency}`
      : lookupPaths(path, dependency)[0];
    lock.packages[target] = {
      version,
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added.push(`${target}@${version}`);
  }
}

const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
  ),
);
writeFileSync(LOCKFILE, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
console.log(
  added.length ? `added ${added.length} entries:\n  ${added.join("\n  ")}` : "lockfile complete",
);
