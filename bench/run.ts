/**
 * `npm run bench`: every benchmark in one run, printed as it goes, then
 * BENCHMARKS.md at the repository root: versions, machine, the targets with
 * their verdicts, and each section's tables with ratios to Rolecraft.
 *
 * Each bench module exports `bench(): Promise<Section>` and still runs alone
 * (`node bench/chat.ts`, `node bench/streaming.ts`, `node bench/pipeline.ts`,
 * `node bench/webservice.ts`, `node bench/mcp.ts`, `node bench/cold-start.ts`). The packages are loaded
 * from their build (`dist/`): `npm run bench` builds first (`prebench`).
 * Each section runs in a fresh Node process, one after another.
 *
 * A section that throws (a framework's scenario failing its counter check,
 * say) is reported as FAILED, the others still run, BENCHMARKS.md is still
 * written, and the process exits 1.
 *
 * Run: node bench/run.ts
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Chat from "./chat.ts"
import {
  commit,
  formatMarkdown,
  formatText,
  machine,
  markdownTable,
  repositoryRoot,
  type Section,
  targetsTable,
  versionOf
} from "./report.ts"

interface Entry {
  readonly title: string
  /** The bench module, relative to this file. */
  readonly file: string
}

const entries: ReadonlyArray<Entry> = [
  { title: "Chat scenarios against the alternatives", file: "./chat.ts" },
  { title: "Streamed chat turns", file: "./streaming.ts" },
  { title: "executeAction on a local action", file: "./pipeline.ts" },
  { title: "webService against a bare Effect HttpClient call and raw undici", file: "./webservice.ts" },
  { title: "mcpTool against the raw MCP SDK client", file: "./mcp.ts" },
  { title: "Cold start", file: "./cold-start.ts" },
  { title: "Durable runs on Postgres", file: "./durable.ts" }
]

/**
 * Runs one bench module in a fresh Node process (`node <file> --json`), so no
 * section's heap, JIT state or leftover work colours another's figures; its
 * console output passes through, and its last line is the section as JSON.
 */
const runSection = (entry: Entry): Promise<Section> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL(entry.file, import.meta.url)), "--json"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      output += chunk
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      const lines = output.trimEnd().split("\n")
      const last = lines.pop() ?? ""
      if (lines.length > 0) console.log(lines.join("\n"))
      if (code !== 0) {
        reject(new Error(`${entry.file} exited with ${signal ?? `code ${code}`}${last === "" ? "" : `: ${last}`}`))
        return
      }
      try {
        resolve(JSON.parse(last) as Section)
      } catch {
        reject(new Error(`${entry.file} printed no section: ${last.slice(0, 500)}`))
      }
    })
  })

const failed = (title: string, error: unknown): Section => ({
  title,
  description: `FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  tables: [],
  targets: [],
  notes: []
})

/** Package names and versions for the report: every framework, effect and the bench's baselines. */
const versions = (): ReadonlyArray<readonly [string, string]> =>
  [...Chat.frameworkPackages, "@effect/platform-node", "@modelcontextprotocol/sdk", "undici"].map(
    (name) => [name, versionOf(name)] as const
  )

const started = performance.now()
const startLoad = loadavg()[0] ?? Number.NaN
const sections: Array<Section> = []
let failures = 0
for (const entry of entries) {
  console.log(`\n… ${entry.title}`)
  const sectionStarted = performance.now()
  const section = await runSection(entry).catch((error: unknown) => {
    failures += 1
    return failed(entry.title, error)
  })
  sections.push(section)
  console.log(formatText(section))
  console.log(`(${((performance.now() - sectionStarted) / 1000).toFixed(0)} s)`)
}
const elapsed = (performance.now() - started) / 1000
const endLoad = loadavg()[0] ?? Number.NaN

const host = machine()
const markdown = [
  "# Benchmarks",
  `Written by \`npm run bench\` (\`bench/run.ts\`) on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC ` +
    `at commit ${commit()}, in ${elapsed.toFixed(0)} s. Do not edit by hand: run it again. Figures are medians of ` +
    "many runs on one machine, each with its baseline measured in the same run; compare the ratios, not the " +
    "absolute figures, across machines.",
  "## Machine",
  markdownTable({
    columns: ["cores", "CPU", "Node", "platform", "memory", "load average (1 min) at start, at end"],
    rows: [
      [
        `${host.cores} (parallelism ${host.availableParallelism})`,
        host.model,
        host.node,
        host.platform,
        `${host.memoryGiB} GiB`,
        `${startLoad.toFixed(2)}, ${endLoad.toFixed(2)}`
      ]
    ]
  }),
  "## Versions",
  markdownTable({ columns: ["package", "version"], rows: versions().map(([name, version]) => [name, version]) }),
  "## Targets",
  markdownTable(targetsTable(sections)),
  ...sections.map(formatMarkdown),
  "## Reproduce",
  "```sh\nnpm ci          # installs and builds the packages (prepare)\nnpm run bench   # builds, then node bench/run.ts; each of bench/chat.ts, streaming.ts, pipeline.ts, webservice.ts, mcp.ts and cold-start.ts also runs alone\n```",
  ""
].join("\n\n")

const output = join(repositoryRoot, "BENCHMARKS.md")
writeFileSync(output, markdown)
console.log(`\nwrote ${output} in ${elapsed.toFixed(0)} s${failures > 0 ? `; ${failures} section(s) FAILED` : ""}`)
if (failures > 0) process.exitCode = 1
