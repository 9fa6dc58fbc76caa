#!/usr/bin/env node
/**
 * `rolecraft-inspector`: starts the run inspector on 127.0.0.1 and prints its
 * address, until Ctrl-C.
 *
 *     rolecraft-inspector [--port 4319] [--host 127.0.0.1] [--approvals URL] [--threads URL]
 *                         [--allowed-host NAME]... [--allowed-origin ORIGIN]...
 *
 * `--approvals` (or `ROLECRAFT_APPROVALS`) opens the approval store whose
 * pending calls the page lists and decides: `sqlite:PATH`, a `.db` file or
 * `postgres://…` (see `Inspector.approvalsFromUrl`); `--threads` (or
 * `ROLECRAFT_THREADS`) the thread store whose threads the page opens by id. Point an app's OTLP
 * exporter (`Otlp.layerJson({ baseUrl })`) at the printed address.
 *
 * @since 0.3.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ApprovalStore, ThreadStore } from "@rolecraft/core"
import * as Inspector from "./Inspector.ts"

const usage =
  "usage: rolecraft-inspector [--port 4319] [--host 127.0.0.1] [--approvals URL] [--threads URL] [--allowed-host NAME] [--allowed-origin ORIGIN]"

const parse = (argv: ReadonlyArray<string>) => {
  const values: Record<string, Array<string>> = {}
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? ""
    if (flag === "--help" || flag === "-h") return undefined
    const value = argv[i + 1]
    if (!flag.startsWith("--") || value === undefined) return undefined
    values[flag.slice(2)] = [...(values[flag.slice(2)] ?? []), value]
    i++
  }
  return values
}

const program = Effect.gen(function* () {
  const flags = parse(process.argv.slice(2))
  if (flags === undefined) return yield* Console.log(usage)
  const port = Number(flags.port?.[0] ?? 4319)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return yield* Effect.fail(`--port must be 0 to 65535`)
  const url = flags.approvals?.[0] ?? process.env.ROLECRAFT_APPROVALS
  const approvals =
    url === undefined
      ? undefined
      : Context.get(yield* Layer.build(Inspector.approvalsFromUrl(url)), ApprovalStore.ApprovalStore)
  const threadsUrl = flags.threads?.[0] ?? process.env.ROLECRAFT_THREADS
  const threads =
    threadsUrl === undefined
      ? undefined
      : Context.get(yield* Layer.build(Inspector.threadsFromUrl(threadsUrl)), ThreadStore.ThreadStore)
  const inspector = yield* Inspector.start({
    threads,
    port,
    host: flags.host?.[0],
    approvals,
    allowedHosts: flags["allowed-host"],
    allowedOrigins: flags["allowed-origin"]
  })
  yield* Console.log(`Rolecraft inspector: ${inspector.url}`)
  yield* Console.log(`OTLP/HTTP JSON: ${inspector.url}/v1/traces and /v1/metrics`)
  yield* Console.log(
    approvals === undefined ? "no approval store (--approvals URL)" : "approvals: from the store given"
  )
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
