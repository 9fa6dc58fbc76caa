/**
 * Ending a stdio server's whole process tree. A server started through a launcher (`npx`, `uvx`, a shell
 * script) is a tree: the launcher, and the server it started. Stopping only the launcher — what the MCP SDK
 * does — leaves the server (or an `npm exec` holding npm's lock) running with no parent. The tree is read
 * before anything is stopped, from `/proc` on Linux, `ps` elsewhere on POSIX; on Windows `taskkill /T` ends it.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"

/** Each process's parent, as `[pid, parent]` pairs. */
const parents = (): ReadonlyArray<readonly [number, number]> => {
  if (process.platform === "linux") {
    const pairs: Array<readonly [number, number]> = []
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      try {
        // `pid (comm) state ppid …`: the command name may hold spaces and parentheses, so read after the last ")".
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        pairs.push([Number(entry), parent])
      } catch {
        // the process ended while the table was read
      }
    }
    return pairs
  }
  try {
    return execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" })
      .split("\n")
      .flatMap((line) => {
        const [pid, parent] = line.trim().split(/\s+/).map(Number)
        return pid === undefined || parent === undefined || Number.isNaN(pid) ? [] : [[pid, parent] as const]
      })
  } catch {
    return []
  }
}

/** The process and every process under it, the root first. */
export const tree = (root: number): ReadonlyArray<number> => {
  if (process.platform === "win32") return [root]
  const children = new Map<number, Array<number>>()
  for (const [pid, parent] of parents()) children.set(parent, [...(children.get(parent) ?? []), pid])
  const found = [root]
  for (let i = 0; i < found.length; i++) {
    for (const child of children.get(found[i] as number) ?? []) if (!found.includes(child)) found.push(child)
  }
  return found
}

/** Whether a process runs (a zombie, ended but not yet reaped by its parent, does not). */
export const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists but is not ours to signal
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  if (process.platform !== "linux") return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z"
  } catch {
    return false
  }
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name)
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/**
 * Ends the given processes: SIGTERM, then SIGKILL for those still running after `graceMs`. Resolves when none
 * of them runs (or SIGKILL was sent).
 */
export const end = async (pids: ReadonlyArray<number>, graceMs = 1_000): Promise<void> => {
  if (process.platform === "win32") {
    for (const pid of pids) {
      try {
        execFileSync("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore" })
      } catch {
        // already gone
      }
    }
    return
  }
  let left = pids.filter(running)
  for (const pid of left) signal(pid, "SIGTERM")
  for (let waited = 0; left.length > 0 && waited < graceMs; waited += 50) {
    await sleep(50)
    left = left.filter(running)
  }
  for (const pid of left) signal(pid, "SIGKILL")
}

/**
 * Ends a process and everything under it at once (SIGKILL), for a server that never started: each process is
 * first stopped (SIGSTOP) and the tree read again until no new one appears, so a process started while the tree
 * was read is not missed.
 */
export const kill = (root: number): void => {
  if (process.platform === "win32") {
    try {
      execFileSync("taskkill", ["/pid", String(root), "/T", "/F"], { stdio: "ignore" })
    } catch {
      // already gone
    }
    return
  }
  const stopped = new Set<number>()
  for (let round = 0; round < 10; round++) {
    const found = tree(root).filter((pid) => !stopped.has(pid))
    if (found.length === 0) break
    for (const pid of found) {
      signal(pid, "SIGSTOP")
      stopped.add(pid)
    }
  }
  for (const pid of stopped) signal(pid, "SIGKILL")
}
