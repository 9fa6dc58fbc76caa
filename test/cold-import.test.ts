/**
 * What `import "@rolecraft/core"` loads (issue 16: its cold import stays within
 * `import "effect"`): a fresh Node process imports the package's sources and
 * records every module resolved. The parts only some programs use — the HTTP
 * client of webService actions, the SQL client of the SQL approval store, the
 * knowledge base's search library, `effect/Config` (credentials),
 * `effect/Random` (never needed: jittered retries use `Schedule.jittered`), effect's JSON Schema importer (MCP tool
 * schemas), the chat kernel (an agent's first chat), the llm executor, and Node's crypto, zlib
 * and file system modules — are loaded by the Effect that first needs them,
 * never at import. The time itself is measured in bench/cold-start.ts.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const packages = join(dirname(fileURLToPath(import.meta.url)), "../packages")

// The child records each resolved URL, imports the package, then prints them one a line.
const program = (name: string) =>
  [
    'import { registerHooks } from "node:module"',
    "const urls = new Set()",
    "registerHooks({ resolve: (specifier, context, next) => { const resolved = next(specifier, context); urls.add(resolved.url); return resolved } })",
    `await import("@rolecraft/${name}")`,
    'console.log([...urls].join("\\n"))'
  ].join("\n")

const loadedByImport = async (name = "core"): Promise<ReadonlyArray<string>> => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--conditions=@rolecraft/source", "--input-type=module", "-e", program(name)],
    { cwd: join(packages, name), timeout: 60_000 }
  )
  return stdout.trim().split("\n")
}

const deferred: ReadonlyArray<readonly [string, RegExp]> = [
  ["effect's HTTP client", /\/effect\/dist\/http\/(HttpClient|FetchHttpClient|HttpClientRequest)\.js$/],
  ["effect's SQL client", /\/effect\/dist\/sql\//],
  ["effect/Config", /\/effect\/dist\/Config\.js$/],
  ["effect/Random", /\/effect\/dist\/Random\.js$/],
  ["effect's JSON Schema importer", /\/effect\/dist\/SchemaRepresentation\.js$/],
  ["minisearch", /\/minisearch\//],
  ["node:crypto", /^node:crypto$/],
  ["node:zlib", /^node:zlib$/],
  ["node:fs/promises", /^node:fs\/promises$/],
  ["node:sqlite", /^node:sqlite$/],
  ["the webService executor", /\/src\/internal\/executor\/webService(\.ts$|\/)/],
  ["the MCP result reader", /\/src\/internal\/executor\/mcpTool\/content\.ts$/],
  ["the chat kernel", /\/src\/internal\/chat\//],
  ["the llm executor", /\/src\/internal\/executor\/llm\.ts$/],
  ["the Anthropic SDK", /\/@anthropic-ai\/sdk\//],
  ["the openai SDK", /\/node_modules\/openai\//]
]

describe("cold import of @rolecraft/core", () => {
  it("loads the package's sources and effect's Schema, and none of the parts loaded on first use", async () => {
    const urls = await loadedByImport()
    // The recording sees the package and effect (else the absences below would prove nothing).
    assert.isTrue(urls.some((url) => url.endsWith("/packages/core/src/index.ts")))
    assert.isTrue(urls.some((url) => url.endsWith("/effect/dist/Schema.js")))
    for (const [name, pattern] of deferred) {
      assert.deepStrictEqual(
        urls.filter((url) => pattern.test(url)),
        [],
        `${name} is loaded by import "@rolecraft/core"`
      )
    }
  })
})

describe("cold import of @rolecraft/anthropic", () => {
  it("loads its sources and the Anthropic SDK, and none of core's parts loaded on first use, nor the openai SDK", async () => {
    const urls = await loadedByImport("anthropic")
    assert.isTrue(urls.some((url) => url.endsWith("/packages/anthropic/src/index.ts")))
    assert.isTrue(urls.some((url) => /\/@anthropic-ai\/sdk\//.test(url)))
    for (const [name, pattern] of deferred.filter(
      ([name]) => name !== "the Anthropic SDK" && name !== "effect/Config"
    )) {
      assert.deepStrictEqual(
        urls.filter((url) => pattern.test(url)),
        [],
        `${name} is loaded by import "@rolecraft/anthropic"`
      )
    }
  })
})

// The inspector: its HTTP server is what it is for (@effect/platform-node's server loads node:zlib itself), but
// the Postgres driver of a store opened by URL, SQLite and the chat kernel are loaded by the first use.
const inspectorDeferred: ReadonlyArray<readonly [string, RegExp]> = [
  ["@effect/sql-pg", /\/@effect\/sql-pg\//],
  ["effect's SQL client", /\/effect\/dist\/sql\//],
  ["node:sqlite", /^node:sqlite$/],
  ["the chat kernel", /\/core\/src\/internal\/chat\//]
]

describe("cold import of @rolecraft/inspector", () => {
  it("loads the inspector's sources and none of the parts loaded on first use", async () => {
    const urls = await loadedByImport("inspector")
    assert.isTrue(urls.some((url) => url.endsWith("/packages/inspector/src/index.ts")))
    assert.isTrue(urls.some((url) => url.endsWith("/packages/inspector/src/internal/page.ts")))
    for (const [name, pattern] of inspectorDeferred) {
      assert.deepStrictEqual(
        urls.filter((url) => pattern.test(url)),
        [],
        `${name} is loaded by import "@rolecraft/inspector"`
      )
    }
  })
})
