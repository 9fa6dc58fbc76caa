// A throwaway Postgres 15 for the tests, the durable examples and the bench: Debian's `postgresql-15`, installed
// with apt when missing, a fresh cluster in a temp folder, a free port on 127.0.0.1, `fsync=off` (the data is
// thrown away). The server runs as the `postgres` user when this runs as root (Postgres refuses root).
//
//   eval "$(node scripts/postgres.ts start)"     # exports ROLECRAFT_PG_URL and ROLECRAFT_PG_DIR
//   node scripts/postgres.ts stop "$ROLECRAFT_PG_DIR"
//
// The vitest global setup (test/setup/postgres.ts), the durable example and bench/durable.ts import from here.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"

const bin = "/usr/lib/postgresql/15/bin"

export interface Postgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication, no password). */
  readonly url: string
  /** The temp folder holding the cluster, its socket and its log; `stop(dir)` removes it. */
  readonly dir: string
}

const isRoot = () => process.getuid?.() === 0

/** Runs a Postgres binary, as the `postgres` user when we are root. */
const run = (tool: string, args: ReadonlyArray<string>) => {
  const [file, argv] = isRoot()
    ? ["runuser", ["-u", "postgres", "--", join(bin, tool), ...args]]
    : [join(bin, tool), args]
  return execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
}

const install = () => {
  if (existsSync(join(bin, "initdb"))) return
  if (!isRoot())
    throw new Error(`Postgres 15 is not installed (${bin}) and installing it needs root: apt-get install postgresql`)
  process.stderr.write("postgres: installing Debian's postgresql package with apt-get\n")
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"] })
  execFileSync("apt-get", ["install", "-y", "postgresql"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
  if (!existsSync(join(bin, "initdb"))) throw new Error(`apt-get installed postgresql but ${bin}/initdb is missing`)
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

const serverOptions = (port: number, dir: string) =>
  `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`

/** Starts a fresh Postgres; throws with the server's log when it cannot. */
export const start = async (): Promise<Postgres> => {
  install()
  const dir = mkdtempSync(join(tmpdir(), "rolecraft-pg-"))
  chmodSync(dir, 0o777)
  if (isRoot()) execFileSync("chown", ["postgres", dir])
  const data = join(dir, "data")
  const log = join(dir, "server.log")
  try {
    run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"])
    const port = await freePort()
    run("pg_ctl", ["-D", data, "-l", log, "-o", serverOptions(port, dir), "-w", "-t", "60", "start"])
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir }
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause)
    const serverLog = existsSync(log) ? execFileSync("tail", ["-n", "20", log], { encoding: "utf8" }) : ""
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`Could not start Postgres 15 from ${bin}: ${detail}\n${serverLog}`)
  }
}

/**
 * Stops the server of `pg` (fast shutdown: open connections are closed) and keeps its data, so that
 * {@link restart} brings it back on the same port: for tests of a database that goes away.
 */
export const halt = (pg: Postgres): void => {
  run("pg_ctl", ["-D", join(pg.dir, "data"), "-m", "fast", "-w", "stop"])
}

/** Starts the server of `pg` again, after {@link halt}, on its port and with its data. */
export const restart = (pg: Postgres): void => {
  const port = Number(new URL(pg.url).port)
  const log = join(pg.dir, "server.log")
  run("pg_ctl", ["-D", join(pg.dir, "data"), "-l", log, "-o", serverOptions(port, pg.dir), "-w", "-t", "60", "start"])
}

/** Stops the server started in `dir` (fast shutdown) and removes the folder. */
export const stop = (dir: string): void => {
  const data = join(dir, "data")
  if (existsSync(data)) {
    try {
      run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    } catch {
      // already stopped
    }
  }
  rmSync(dir, { recursive: true, force: true })
}

/**
 * Creates a new, empty database `<prefix>_<random>` on the server at `url` and returns its URL: for tests and
 * benches whose tables must not meet another's (the workflow engine's shard locks, above all).
 */
export const freshDatabase = (url: string, prefix: string): Promise<string> => {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
  return Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`CREATE DATABASE ${name}`)
      const target = new URL(url)
      target.pathname = `/${name}`
      return target.toString()
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url) })), Effect.orDie)
  )
}

if (import.meta.main) {
  const [command, dir] = process.argv.slice(2)
  if (command === "start") {
    const pg = await start()
    console.log(`export ROLECRAFT_PG_URL=${pg.url}`)
    console.log(`export ROLECRAFT_PG_DIR=${pg.dir}`)
  } else if (command === "stop" && dir !== undefined) {
    stop(dir)
  } else {
    console.error("usage: node scripts/postgres.ts start | stop DIR")
    process.exit(2)
  }
}
