// `npm run check:mcp`: the MCP project's conformance suite (@modelcontextprotocol/conformance, a devDependency)
// against Rolecraft, both ways.
//
// - Server: scripts/mcp-conformance/server.ts serves a role with `Mcp.serve` over streamable HTTP on 127.0.0.1;
//   the suite runs every server scenario against it (`server --suite all`). A scenario passes when none of its
//   checks is a FAILURE (the suite's own summary rule; WARNINGs are shown, not counted).
// - Client: for every client scenario the suite starts its test server and launches the client command
//   (scripts/mcp-conformance/client.ts, Rolecraft's public API only), two scenarios at a time; a scenario passes
//   when the suite's single-scenario run exits 0 (no FAILURE, no WARNING, the client exited 0 where it must).
//
// It prints one table per side and a summary, and exits 1 when a scenario fails that expected.ts does not list
// (as not applicable, or not yet done), or when a scenario listed as not yet done passes (take it off the list).
//
//   node scripts/mcp-conformance/run.ts [--server-only | --client-only] [--scenario NAME]... [--write-docs]
//
// `--write-docs` rewrites the table in docs/mcp.md between `<!-- conformance:start -->` and
// `<!-- conformance:end -->`. The suite's raw results stay in a temp folder, printed at the end.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Expected from "./expected.ts"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../..")
const suite = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const args = process.argv.slice(2)
const only = new Set(args.flatMap((arg, i) => (args[i - 1] === "--scenario" ? [arg] : [])))
const sides = args.includes("--server-only")
  ? ["server"]
  : args.includes("--client-only")
    ? ["client"]
    : ["server", "client"]

interface Outcome {
  readonly scenario: string
  readonly passed: boolean
  readonly detail: string
  readonly seconds: number
}

interface Check {
  readonly status: string
  readonly errorMessage?: string
  readonly name?: string
}

const listed = (side: "server" | "client"): ReadonlyArray<string> => {
  const text = execFileSync(process.execPath, [suite, "list", side === "server" ? "--server" : "--client"], {
    encoding: "utf8"
  })
  const names = [...text.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1] as string)
  return only.size === 0 ? names : names.filter((name) => only.has(name))
}

const readChecks = (dir: string): ReadonlyArray<Check> | undefined => {
  const file = join(dir, "checks.json")
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ReadonlyArray<Check>) : undefined
}

// The suite writes `<out>/<prefix><scenario>-<timestamp>/checks.json` (a scenario `auth/x` under `<out>/auth/`).
const resultDir = (out: string, prefix: string, scenario: string): string | undefined => {
  const parent = join(out, dirname(scenario))
  const base = `${prefix}${scenario.split("/").pop()}-`
  if (!existsSync(parent)) return undefined
  const match = readdirSync(parent)
    .filter((name) => name.startsWith(base) && /^\d{4}-/.test(name.slice(base.length)))
    .sort()
    .pop()
  return match === undefined ? undefined : join(parent, match)
}

const describeChecks = (checks: ReadonlyArray<Check>): string => {
  const failures = checks.filter((check) => check.status === "FAILURE")
  const warnings = checks.filter((check) => check.status === "WARNING")
  const passed = checks.filter((check) => check.status === "SUCCESS").length
  const problems = [...failures, ...warnings].map((check) => `${check.status}: ${check.errorMessage ?? check.name}`)
  return [`${passed}/${passed + failures.length} checks`, ...problems.slice(0, 3)].join("; ")
}

const startServer = (): Promise<{ readonly url: string; readonly process: ChildProcess }> =>
  new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, ["--conditions=@rolecraft/source", join(here, "server.ts")], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /^MCP_URL=(\S+)$/m.exec(output)
      if (match !== null) resolveStart({ url: match[1] as string, process: child })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once("exit", (code) => reject(new Error(`the served role exited (${code}) before listening:\n${output}`)))
    setTimeout(() => reject(new Error(`the served role did not print its URL in 60 s:\n${output}`)), 60_000).unref()
  })

const run = (
  argv: ReadonlyArray<string>,
  timeoutMs: number
): Promise<{ readonly code: number; readonly output: string }> =>
  new Promise((resolveRun) => {
    const child = spawn(process.execPath, [suite, ...argv], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolveRun({ code: code ?? 1, output })
    })
  })

const serverSide = async (out: string): Promise<ReadonlyArray<Outcome>> => {
  const scenarios = listed("server")
  const served = await startServer()
  try {
    const started = Date.now()
    const ran = await run(["server", "--url", served.url, "--suite", "all", "-o", out], 300_000)
    const seconds = (Date.now() - started) / 1000
    return scenarios.map((scenario) => {
      const dir = resultDir(out, "server-", scenario)
      const checks = dir === undefined ? undefined : readChecks(dir)
      if (checks === undefined) {
        return { scenario, passed: false, detail: `no result (suite exit ${ran.code})`, seconds }
      }
      return {
        scenario,
        passed: !checks.some((check) => check.status === "FAILURE"),
        detail: describeChecks(checks),
        seconds
      }
    })
  } finally {
    served.process.kill()
  }
}

// sse-retry measures the client's reconnection delay, which a loaded machine skews: it runs alone, first; the
// others run `clientConcurrency` at a time (each is its own suite process, test server and client process).
const clientConcurrency = 2
const timingSensitive = new Set(["sse-retry"])

const clientSide = async (out: string): Promise<ReadonlyArray<Outcome>> => {
  const command = `${process.execPath} --conditions=@rolecraft/source ${join(here, "client.ts")}`
  if (/\s/.test(root)) throw new Error(`the suite splits the client command on spaces: move the checkout (${root})`)
  const scenarios = listed("client")
  const outcomes = new Map<string, Outcome>()
  const one = async (scenario: string) => {
    const started = Date.now()
    const ran = await run(
      ["client", "--command", command, "--scenario", scenario, "--timeout", "60000", "-o", out],
      150_000
    )
    const seconds = (Date.now() - started) / 1000
    const dir = resultDir(out, "", scenario)
    const checks = dir === undefined ? undefined : readChecks(dir)
    const detail = checks === undefined ? `no result (suite exit ${ran.code})` : describeChecks(checks)
    outcomes.set(scenario, { scenario, passed: ran.code === 0, detail, seconds })
    process.stderr.write(`${ran.code === 0 ? "✓" : "✗"} client ${scenario} (${seconds.toFixed(1)} s)\n`)
  }
  for (const scenario of scenarios.filter((name) => timingSensitive.has(name))) await one(scenario)
  const queue = scenarios.filter((name) => !timingSensitive.has(name))
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await one(next)
  }
  await Promise.all(Array.from({ length: clientConcurrency }, worker))
  return scenarios.flatMap((scenario) => {
    const outcome = outcomes.get(scenario)
    return outcome === undefined ? [] : [outcome]
  })
}

const verdictOf = (
  outcome: Outcome,
  expected: Expected.Expected
): { readonly mark: string; readonly ok: boolean; readonly note: string } => {
  const notApplicable = expected.notApplicable[outcome.scenario]
  const notYet = expected.notYet[outcome.scenario]
  if (outcome.passed && notYet !== undefined)
    return { mark: "✓", ok: false, note: "passes now: take it off notYet in expected.ts" }
  if (outcome.passed) return { mark: "✓", ok: true, note: "" }
  if (notApplicable !== undefined) return { mark: "n/a", ok: true, note: notApplicable }
  if (notYet !== undefined) return { mark: "✗", ok: true, note: `not yet: ${notYet}` }
  return { mark: "✗", ok: false, note: "UNEXPECTED FAILURE" }
}

const table = (side: string, outcomes: ReadonlyArray<Outcome>, expected: Expected.Expected) => {
  const rows = outcomes.map((outcome) => ({ outcome, ...verdictOf(outcome, expected) }))
  const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")
  const markdown = [
    `| ${side} scenario | result | note |`,
    "|---|---|---|",
    ...rows.map(({ outcome, mark, note }) => `| ${outcome.scenario} | ${mark} | ${cell(note)} |`)
  ].join("\n")
  const passed = outcomes.filter((outcome) => outcome.passed).length
  const summary = `${side}: ${passed} of ${outcomes.length} scenarios pass`
  const lines = rows
    .map(
      ({ outcome, mark, note }) =>
        `${mark.padEnd(3)} ${outcome.scenario.padEnd(44)} ${outcome.detail}${note === "" ? "" : ` [${note}]`}`
    )
    .join("\n")
  return {
    markdown,
    summary,
    console: lines,
    bad: rows.filter((row) => !row.ok).map((row) => `${row.outcome.scenario}: ${row.note}`)
  }
}

const writeDocs = (markdown: string) => {
  const file = join(root, "docs/mcp.md")
  const text = readFileSync(file, "utf8")
  const start = "<!-- conformance:start -->"
  const end = "<!-- conformance:end -->"
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`docs/mcp.md has no ${start} … ${end} section`)
  writeFileSync(file, `${text.slice(0, from + start.length)}\n${markdown}\n${text.slice(to)}`)
  // The repository's formatter pads markdown tables; `npm run lint` checks it.
  execFileSync(process.execPath, [join(root, "node_modules/@biomejs/biome/bin/biome"), "format", "--write", file])
}

const main = async () => {
  const out = mkdtempSync(join(tmpdir(), "rolecraft-mcp-conformance-"))
  const started = Date.now()
  const tables: Array<ReturnType<typeof table>> = []
  if (sides.includes("server")) tables.push(table("server", await serverSide(join(out, "server")), Expected.server))
  if (sides.includes("client")) tables.push(table("client", await clientSide(join(out, "client")), Expected.client))
  for (const { console: text } of tables) process.stdout.write(`\n${text}\n`)
  process.stdout.write(
    `\n== MCP conformance (@modelcontextprotocol/conformance), ${((Date.now() - started) / 1000).toFixed(0)} s\n`
  )
  for (const { summary } of tables) process.stdout.write(`${summary}\n`)
  process.stdout.write(`raw results: ${out}\n`)
  if (args.includes("--write-docs")) writeDocs(tables.map((t) => t.markdown).join("\n\n"))
  const bad = tables.flatMap((t) => t.bad)
  if (bad.length > 0) {
    process.stdout.write(`FAILED:\n${bad.map((line) => `  ${line}`).join("\n")}\n`)
    process.exit(1)
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
