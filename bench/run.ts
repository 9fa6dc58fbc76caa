/**
 * `npm run bench`: every benchmark in one run, printed as it goes, then
 * BENCHMARKS.md at the repository root: versions, machine, the targets with
 * their verdicts, and each section's tables with ratios to Rolecraft.
 *
 * Each bench module exports `bench(): Promise<Section>` and still runs alone
 * (`node bench/chat.ts`, `node bench/streaming.ts`, `node bench/pipeline.ts`,
 * `node bench/webservice.ts`, `node bench/mcp.ts`, `node bench/cold-start.ts`, `node bench/threads.ts`, `node bench/compose.ts`). The packages are loaded
 * from their build (`dist/`): `npm run bench` builds first (`prebench`).
 * Each section runs in a fresh Node process, one after another.
 *
 * A section that throws (a framework's scenario failing its counter check,
 * say) is reported as FAILED, the others still run, BENCHMARKS.md is still
 * written, and the process exits 1.
 *
 * Every section runs in a process group of its own, and the Postgres the
 * durable section needs is started here once (unless ROLECRAFT_PG_URL names
 * one): when the run ends, fails or is interrupted (SIGINT, SIGTERM,
 * SIGHUP), every group is killed and the database stopped (`cleanup.ts`). A
 * section past its time limit is stopped the same way and reported FAILED.
 *
 * Run: node bench/run.ts [--quick] [--quiet-only | --loaded-only] [--only chat,curves]
 * (`--quick`: one pass, a quarter of each sampling plan, one round of
 * framework children, 40 durable turns; prints the targets, writes nothing).
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { start as startPostgres, stop as stopPostgres } from "../scripts/postgres.ts"
import * as Chat from "./chat.ts"
import { onStop, ownGroup } from "./cleanup.ts"
import { writeCurves } from "./plot.ts"
import {
  commit,
  formatMarkdown,
  formatText,
  machine,
  markdownTable,
  repositoryRoot,
  passesTargetsTable,
  type Section,
  versionOf
} from "./report.ts"

interface Entry {
  readonly title: string
  /** The bench module, relative to this file. */
  readonly file: string
  /** Whether it needs a Postgres (the harness starts one for the run and passes ROLECRAFT_PG_URL). */
  readonly postgres?: boolean
}

const entries: ReadonlyArray<Entry> = [
  { title: "Chat scenarios against the alternatives", file: "./chat.ts" },
  { title: "Streamed chat turns", file: "./streaming.ts" },
  { title: "executeAction on a local action", file: "./pipeline.ts" },
  { title: "webService against a bare Effect HttpClient call and raw undici", file: "./webservice.ts" },
  { title: "mcpTool against the raw MCP SDK client", file: "./mcp.ts" },
  { title: "Cold start", file: "./cold-start.ts" },
  { title: "Cost curves: concurrent chat turns", file: "./curves.ts" },
  { title: "Durable runs on Postgres", file: "./durable.ts", postgres: true },
  { title: "Conversation threads", file: "./threads.ts" },
  { title: "Agents made of agents", file: "./compose.ts" }
]

/** `--only chat,durable`: the sections whose files are named (without `.ts`), in their usual order. */
const onlyIndex = process.argv.indexOf("--only")
const chosen =
  onlyIndex === -1
    ? entries
    : entries.filter((entry) =>
        (process.argv[onlyIndex + 1] ?? "").split(",").includes(entry.file.replace(/^\.\//, "").replace(/\.ts$/, ""))
      )
if (chosen.length === 0)
  throw new Error(`--only names no section; one or more of: ${entries.map((e) => e.file).join(", ")}`)

/** `--quick`: one pass (quiet), fewer samples and rounds in every section (`quickMode()` in measure.ts). */
const quick = process.argv.includes("--quick")

/**
 * The longest a section may run, s (BENCH_SECTION_LIMIT_S overrides): past it the section is stopped and
 * reported FAILED, so that a run on a loaded machine ends (each section takes well under a minute on a quiet
 * two-core machine, the quick ones a few seconds).
 */
const sectionLimitS = Number(process.env.BENCH_SECTION_LIMIT_S ?? (quick ? 180 : 600))

/** Turns of the durable proof in a quick run, unless DURABLE_TURNS says otherwise. */
const quickDurableTurns = "40"

/**
 * The Postgres the sections share: started once, when the first section
 * that needs it runs (unless ROLECRAFT_PG_URL names one), and stopped when
 * the run ends or is interrupted.
 */
let database: string | undefined = process.env.ROLECRAFT_PG_URL === "" ? undefined : process.env.ROLECRAFT_PG_URL
const postgresUrl = async (): Promise<string> => {
  if (database !== undefined) return database
  const pg = await startPostgres()
  onStop(() => stopPostgres(pg.dir))
  database = pg.url
  return database
}

/**
 * Runs one bench module in a fresh Node process (`node --expose-gc <file>
 * --json`, plus `--loaded` in the loaded pass), so no section's heap, JIT
 * state or leftover work colours another's figures; its console output
 * passes through, and its last line is the section as JSON.
 */
const runSection = async (entry: Entry, loaded: boolean): Promise<Section> => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(entry.postgres === true ? { ROLECRAFT_PG_URL: await postgresUrl() } : {}),
    ...(quick && process.env.DURABLE_TURNS === undefined ? { DURABLE_TURNS: quickDurableTurns } : {})
  }
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        fileURLToPath(new URL(entry.file, import.meta.url)),
        "--json",
        ...(loaded ? ["--loaded"] : []),
        ...(quick ? ["--quick"] : [])
      ],
      // a process group of its own: an interrupted run kills it with all it started
      { stdio: ["ignore", "pipe", "inherit"], detached: true, env }
    )
    const kill = ownGroup(child)
    // a section that runs past its limit is killed with all it started, and reported FAILED
    let timedOut = false
    const limit = setTimeout(() => {
      timedOut = true
      kill()
    }, sectionLimitS * 1000)
    let output = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      output += chunk
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(limit)
      const lines = output.trimEnd().split("\n")
      const last = lines.pop() ?? ""
      if (lines.length > 0) console.log(lines.join("\n"))
      if (timedOut) {
        reject(new Error(`${entry.file} ran past the section limit of ${sectionLimitS} s and was stopped`))
        return
      }
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
}

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

/**
 * One core kept busy for the loaded pass: a child process spinning on
 * arithmetic until it is killed. It is killed when the pass ends, and when
 * this process exits or is stopped, so it never outlives the run.
 */
const busyCore = (): { readonly stop: () => void } => {
  const child = spawn(process.execPath, ["-e", "let x = 1; for (;;) { x = (x * 1103515245 + 12345) % 2147483648 }"], {
    stdio: "ignore"
  })
  return {
    stop: onStop(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  }
}

interface Pass {
  readonly name: "quiet" | "loaded"
  readonly sections: ReadonlyArray<Section>
  readonly seconds: number
  readonly load: readonly [start: number, end: number]
}

let failures = 0

/** Runs every section once, in order; `loaded` keeps one core busy meanwhile. */
const runPass = async (name: Pass["name"]): Promise<Pass> => {
  console.log(`\n=== ${name} pass${name === "loaded" ? " (one core kept busy by a CPU-bound child process)" : ""}`)
  const started = performance.now()
  const startLoad = loadavg()[0] ?? Number.NaN
  const busy = name === "loaded" ? busyCore() : undefined
  const sections: Array<Section> = []
  try {
    for (const entry of chosen) {
      console.log(`\n… ${entry.title} (${name})`)
      const sectionStarted = performance.now()
      const section = await runSection(entry, name === "loaded").catch((error: unknown) => {
        failures += 1
        return failed(entry.title, error)
      })
      sections.push(section)
      console.log(formatText(section))
      console.log(`(${((performance.now() - sectionStarted) / 1000).toFixed(0)} s)`)
    }
  } finally {
    busy?.stop()
  }
  return {
    name,
    sections,
    seconds: (performance.now() - started) / 1000,
    load: [startLoad, loadavg()[0] ?? Number.NaN]
  }
}

const only =
  quick || process.argv.includes("--quiet-only")
    ? "quiet"
    : process.argv.includes("--loaded-only")
      ? "loaded"
      : undefined
const started = performance.now()
const passes: Array<Pass> = []
for (const name of ["quiet", "loaded"] as const) {
  if (only === undefined || only === name) passes.push(await runPass(name))
}
const elapsed = (performance.now() - started) / 1000

const host = machine()
const markdown = [
  "# Benchmarks",
  `Written by \`npm run bench\` (\`bench/run.ts\`) on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC ` +
    `at commit ${commit()}, in ${elapsed.toFixed(0)} s. Do not edit by hand: run it again. Every section runs ` +
    "twice: in the quiet pass, and in the loaded pass with one core kept busy by a CPU-bound child process " +
    "(started and killed by the harness). Each ratio comes from at least three interleaved rounds and is shown with " +
    "its range over the rounds (min–max); a target is met only when it is met in every round. Figures are medians " +
    "on one machine, each with its baseline measured in the same run; compare the ratios, not the absolute " +
    "figures, across machines.",
  "## Machine",
  markdownTable({
    columns: [
      "cores",
      "CPU",
      "Node",
      "platform",
      "memory",
      ...passes.map((pass) => `load average (1 min), ${pass.name} pass: start, end`)
    ],
    rows: [
      [
        `${host.cores} (parallelism ${host.availableParallelism})`,
        host.model,
        host.node,
        host.platform,
        `${host.memoryGiB} GiB`,
        ...passes.map((pass) => `${pass.load[0].toFixed(2)}, ${pass.load[1].toFixed(2)} (${pass.seconds.toFixed(0)} s)`)
      ]
    ]
  }),
  "## Versions",
  markdownTable({ columns: ["package", "version"], rows: versions().map(([name, version]) => [name, version]) }),
  "## Targets",
  "Met only when met in every round of every pass. The measured figure is the median of the rounds' ratios, with " +
    "their range in brackets.",
  markdownTable(passesTargetsTable(passes.map((pass) => ({ name: pass.name, sections: pass.sections })))),
  ...passes.flatMap((pass) =>
    pass.name === "quiet" || passes.length === 1
      ? pass.sections.map(formatMarkdown)
      : [
          "# Under load: the same sections with one core kept busy",
          ...pass.sections.map((section) => formatMarkdown({ ...section, title: `${section.title} (loaded)` }))
        ]
  ),
  "## Reproduce",
  "```sh\nnpm ci          # installs and builds the packages (prepare)\nnpm run bench   # builds, then node bench/run.ts (both passes); --quiet-only or --loaded-only runs one\nnpm run bench -- --quick   # one pass, fewer samples, under two minutes; writes nothing\nnpm run bench -- --quick --only chat,curves   # some sections (file names without .ts)\n                # each of bench/chat.ts, streaming.ts, durable.ts, pipeline.ts, webservice.ts, mcp.ts and cold-start.ts also runs alone\n```",
  ""
].join("\n\n")

if (quick) {
  // a quick run is for a look, not a record: BENCHMARKS.md and the curves' SVGs stay as the last full run left them
  console.log(
    `\n${formatText({ title: "Targets (quick run: one pass, fewer samples)", description: "", tables: [passesTargetsTable(passes.map((pass) => ({ name: pass.name, sections: pass.sections })))], targets: [], notes: [] })}`
  )
  console.log(
    `\nquick run done in ${elapsed.toFixed(0)} s${failures > 0 ? `; ${failures} section(s) FAILED` : ""}; nothing written`
  )
} else {
  const output = join(repositoryRoot, "BENCHMARKS.md")
  writeFileSync(output, markdown)
  // the curves of the quiet pass (the loaded pass's are in the tables)
  const written = writeCurves(passes[0]?.sections.flatMap((section) => section.curves ?? []) ?? [])
  console.log(
    `\nwrote ${output}${written.length > 0 ? ` and ${written.join(", ")}` : ""} in ${elapsed.toFixed(0)} s${failures > 0 ? `; ${failures} section(s) FAILED` : ""}`
  )
}
if (failures > 0) process.exitCode = 1
